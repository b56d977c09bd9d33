// Options of claimCheckMiddleware (ADR 0054, with ADR 0140's additions defaultDigest, retain,
// passThrough and envelopesAreData). Validated and frozen at boot; the middleware keeps a
// shared_ptr<const ClaimCheckOptions>. Hook functions must be thread-safe and pure where
// stated: a digest is recorded in the log, so it must be a deterministic function of the
// result (ADR 0054 D2).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "loom/content/content_store.h"
#include "loom/effects/effect_context.h"
#include "loom/json/json.h"

namespace loom::middleware {

inline constexpr int64_t kClassicClaimCheckCapBytes = 16 * 1024;

// A digest: pure function of the result and its JSON text, recorded in the envelope.
using DigestFn = std::function<json::value(const json::value& result, std::string_view text)>;

struct OffloadInfo {
  const effects::EffectContext& context;
  std::string address;
  int64_t size = 0;
  const json::value& envelope;  // as recorded (inside its taint wrapper when tainted)
};

// The name of the execution.claimCheck layer, and of a claimCheckMiddleware by default.
inline constexpr std::string_view kClaimCheckName = "claimCheck";

struct ClaimCheckOptions {
  // The middleware's name() in a chain's layerNames() and find(). A claimCheckMiddleware
  // placed in execution.effectMiddleware needs another name ("claimCheck" is the built-in
  // layer's); the sentinel preset is "sentinel".
  std::string name{kClaimCheckName};
  std::shared_ptr<content::ContentStore> store;  // required
  int64_t inlineCapBytes = kClassicClaimCheckCapBytes;  // JSON text at or under it stays inline
  std::map<std::string, DigestFn, std::less<>> digests;  // per effect id; wins over the default
  DigestFn defaultDigest;  // for effects without a digests entry; never for tainted results
  // Marks envelopes retain: true (load-bearing). Per effect id: retainFor wins when set.
  bool retain = false;
  std::function<bool(std::string_view effectId)> retainFor;
  // Leave this result inline (e.g. a returnsMedia tool's media). Asked after the
  // envelopesAreData guard: a result nesting a look-alike is offloaded whatever it answers.
  std::function<bool(const effects::EffectContext&, const json::value& result)> passThrough;
  // A result that already looks like an envelope is data: offloaded like any value, and (D11
  // rule 1) a result whose text contains "__loomClaimCheck" anywhere is offloaded whole even
  // under the cap. Off: such a result passes as is (classic behaviour).
  bool envelopesAreData = false;
  // Which effect ids it applies to; nullopt = every effect.
  std::optional<std::set<std::string, std::less<>>> effectIds;
  // ADR 0140 D9: only agent-loop tool frames (taskKind "tool" and a step id
  // <loop>#turn:<i>:tool:<j>); never transient calls or other steps sharing the id.
  bool agentToolFramesOnly = false;
  // Called after each offload; a throw is caught and reported through onWarn (L).
  std::function<void(const OffloadInfo&)> onOffload;
  std::function<void(std::string_view)> onWarn;
};

}  // namespace loom::middleware
