// The ready-made retry middleware (`execution.effectMiddleware` kind "retry"): calls the rest
// of the chain again when it throws a loom::Error whose code is in retryOn, sleeping an
// exponentially growing, jittered delay between tries through the config's Clock. The last
// error (or any non-retryable one) is rethrown unchanged, so the runtime records it as the
// step's failure. Every try gets the same context and a copy of the original input.
// Thread-safety: invoke may run on many threads at once (the jitter source has a mutex).
#pragma once

#include <mutex>
#include <random>

#include "loom/effects/middleware.h"
#include "loom/middleware/retry_config.h"

namespace loom::middleware {

class RetryMiddleware : public effects::Middleware {
 public:
  // Throws ConfigError listing every problem of `config` (paths "retry.<field>").
  explicit RetryMiddleware(RetryConfig config);

  std::string_view name() const override { return kRetryName; }
  // "retry(attempts = 3, initialDelayMs = 100, multiplier = 2, maxDelayMs = 10000, ...)".
  std::string describe() const override;
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override;

  const RetryConfig& config() const { return config_; }
  // The delay slept before try `attempt` + 1: the nominal delay scaled by the jitter.
  int64_t delayBeforeRetry(int attempt);

 private:
  bool retryable(ErrorCode code) const;
  RetryConfig config_;
  std::mutex rngMu_;
  std::mt19937_64 rng_;  // GUARDED_BY(rngMu_)
};

}  // namespace loom::middleware
