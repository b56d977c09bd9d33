// The middleware interface and the chain it forms. A middleware sees the call's context, the
// input and `next` (the rest of the chain); it returns the result, and may change the input
// or the result, call next several times (retry) or not at all (refuse, by throwing).
// The chain is built ONCE at boot, outermost first:
//   kill switch -> claim-check (when configured) -> secret redaction
//   -> every execution.effectMiddleware entry, in order -> the effect.
// The effect's result is made inert (content::makeInert) before the innermost layer sees it,
// so an envelope or content ref in it is data, never trusted (docs/adr/0004).
// Thread-safety: a built chain is immutable and may be invoked from many threads at once, so
// every middleware's invoke must be thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loom/effects/effect_context.h"
#include "loom/json/json.h"
#include "loom/util/function_ref.h"

namespace loom::effects {

// What the chain finally calls: the effect itself.
using Terminal = FunctionRef<json::value(const EffectContext&, json::value)>;

class EffectChain;

// The rest of the chain after one middleware. Cheap to copy; valid only during the call.
class Next {
 public:
  json::value operator()(const EffectContext& ctx, json::value input) const;

 private:
  friend class EffectChain;
  Next(const EffectChain& chain, std::size_t index, Terminal terminal)
      : chain_(&chain), index_(index), terminal_(terminal) {}
  const EffectChain* chain_;
  std::size_t index_;
  Terminal terminal_;
};

class Middleware {
 public:
  virtual ~Middleware() = default;
  // A stable name shown by `loom config check` and in chain-order tests ("killSwitch", ...).
  virtual std::string_view name() const = 0;
  // The middleware and its settings as `loom config check` shows them ("retry(attempts = 3,
  // ...)"); its name by default.
  virtual std::string describe() const { return std::string(name()); }
  virtual json::value invoke(const EffectContext& ctx, json::value input, const Next& next) = 0;
};

class EffectChain {
 public:
  // `layers` outermost first. Layers are shared with no one else after this.
  explicit EffectChain(std::vector<std::shared_ptr<Middleware>> layers = {});

  json::value invoke(const EffectContext& ctx, json::value input, Terminal effect) const;
  std::vector<std::string> layerNames() const;
  std::size_t size() const { return layers_.size(); }
  // The first layer with this name, nullptr when there is none (for tests and diagnostics).
  const Middleware* find(std::string_view name) const;

 private:
  friend class Next;
  json::value invokeFrom(std::size_t index, const EffectContext& ctx, json::value input,
                         Terminal effect) const;
  std::vector<std::shared_ptr<Middleware>> layers_;
};

}  // namespace loom::effects
