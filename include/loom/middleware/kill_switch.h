// The kill switch middleware: the OUTERMOST layer of every chain (ADR 0140 D5). Before each
// effect it asks the KillSwitchStore whether the effect id is stopped; a stopped effect is
// not run, no inner layer sees the call, and it throws effects::EffectStopped, which the
// workflow runtime records as a retryable STEP_FAILED before parking the run ("effectStopped")
// so `loom unkill` then `loom resume` completes it. Transient calls are stopped the same way.
// Thread-safety: invoke may run on many threads at once (the store is thread-safe).
#pragma once

#include <memory>

#include "loom/effects/middleware.h"
#include "loom/middleware/kill_switch_store.h"

namespace loom::middleware {

class KillSwitchMiddleware : public effects::Middleware {
 public:
  // `store` must not be null; it is shared with whoever kills and unkills (App, CLI).
  explicit KillSwitchMiddleware(std::shared_ptr<const KillSwitchStore> store);

  std::string_view name() const override { return kKillSwitchName; }
  // Throws EffectStopped (or KillSwitchUnreadable) without calling next when ctx.effectId is
  // stopped; otherwise returns next's result untouched.
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override;

 private:
  std::shared_ptr<const KillSwitchStore> store_;
};

}  // namespace loom::middleware
