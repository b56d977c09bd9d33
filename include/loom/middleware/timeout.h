// The ready-made timeout middleware (`execution.effectMiddleware` kind "timeout"): runs the
// rest of the chain on a helper thread and, when it has not returned within `ms`
// milliseconds (steady clock), throws DeadlineExceededError naming the effect. C++ cannot
// cancel a thread: the timed-out effect KEEPS RUNNING in the background; its late result or
// error is discarded and reported through the warn sink. Consequences, enforced or stated:
// - timeout must be the LAST (innermost) execution.effectMiddleware entry (the app's config
//   validation refuses anything else): the chain's `next` refers to the caller's stack, so
//   an abandoned call must not re-enter middleware after the caller has moved on;
// - a call abandoned before its helper thread started is never started;
// - ctx.step closures (task kind "flow") run inline, without a timeout: they capture the
//   workflow's own frame, which must not be used after the workflow has unwound;
// - an effect that can hang for good should also bound itself (a socket timeout), since each
//   abandoned call keeps a thread until it returns.
// Thread-safety: invoke may run on many threads at once.
#pragma once

#include "loom/effects/middleware.h"
#include "loom/middleware/timeout_config.h"
#include "loom/middleware/warn_sink.h"
#include "loom/util/error.h"

namespace loom::middleware {

class TimeoutMiddleware : public effects::Middleware {
 public:
  // Throws ConfigError listing every problem of `config` (paths "timeout.<field>").
  explicit TimeoutMiddleware(TimeoutConfig config, WarnSink onWarn = {});

  std::string_view name() const override { return kTimeoutName; }
  // "timeout(ms = 30000)".
  std::string describe() const override;
  // Returns next's result, or rethrows its exception, when it finishes within config().ms;
  // otherwise throws DeadlineExceededError and leaves the call running (see above).
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override;

  const TimeoutConfig& config() const { return config_; }

 private:
  TimeoutConfig config_;
  WarnSink onWarn_;
};

}  // namespace loom::middleware
