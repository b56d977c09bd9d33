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

// The kill switch's table could not be read. Its code is kStopped: the kill switch fails
// closed, so the effect does not run and the run parks, with a wake time (the effect's
// execution.retry initial interval) so that a worker tries again once the database is
// readable, rather than running effects an operator may have stopped.
class KillSwitchUnreadable : public Error {
 public:
  KillSwitchUnreadable(const std::string& effectId, const std::string& cause)
      : Error(ErrorCode::kStopped,
              "effect '" + effectId + "' was not run: the kill switch could not be read (" + cause +
                  "); it is tried again when the run's park is due (`loom worker`), or fix the "
                  "home's database and `loom resume <id>`") {}
};

}  // namespace loom::effects
