// Errors raised by effects and the middleware chain.
#pragma once

#include <string>

#include "loom/util/error.h"

namespace loom::effects {

// An operator stopped this effect with the kill switch (`loom kill`). The step fails and the
// run parks; `loom unkill` then `loom resume` runs it again.
class EffectStopped : public Error {
 public:
  explicit EffectStopped(const std::string& effectId)
      : Error(ErrorCode::kStopped, "effect '" + effectId +
                                       "' is stopped by the kill switch; run `loom unkill " +
                                       effectId + "` (or `loom unkill --all`), then `loom "
                                       "resume <id>`"),
        effectId_(effectId) {}
  const std::string& effectId() const { return effectId_; }

 private:
  std::string effectId_;
};

}  // namespace loom::effects
