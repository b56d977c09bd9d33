#include "loom/middleware/kill_switch.h"

#include "loom/effects/errors.h"

namespace loom::middleware {

KillSwitchMiddleware::KillSwitchMiddleware(std::shared_ptr<const KillSwitchStore> store)
    : store_(std::move(store)) {
  if (!store_) throw InvalidArgumentError("the kill switch middleware needs a KillSwitchStore");
}

json::value KillSwitchMiddleware::invoke(const effects::EffectContext& ctx, json::value input,
                                         const effects::Next& next) {
  if (store_->isStopped(ctx.effectId)) throw effects::EffectStopped(ctx.effectId);
  return next(ctx, std::move(input));
}

}  // namespace loom::middleware
