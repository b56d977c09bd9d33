#include "loom/middleware/retry.h"

#include <algorithm>

#include "loom/middleware/middleware_factory.h"
#include "loom/util/backoff.h"

namespace loom::middleware {

RetryMiddleware::RetryMiddleware(RetryConfig config)
    : config_(std::move(config)), rng_(config_.seed != 0 ? config_.seed : std::random_device{}()) {
  ConfigIssues issues = validateRetryConfig(config_, "retry");
  if (!issues.empty()) throw ConfigError("invalid retry middleware:\n" + formatIssues(issues));
}

json::value RetryMiddleware::invoke(const effects::EffectContext& ctx, json::value input,
                                    const effects::Next& next) {
  for (int attempt = 1;; ++attempt) {
    try {
      // The last try may consume the input; earlier ones work on a copy.
      return attempt < config_.attempts ? next(ctx, input) : next(ctx, std::move(input));
    } catch (const ContentStoreUnavailableError&) {
      throw;  // the effect ran; running it again makes no room in the store
    } catch (const Error& e) {
      if (attempt >= config_.attempts || !retryable(e.code())) throw;
    }
    config_.clock->sleepMillis(delayBeforeRetry(attempt));
  }
}

int64_t RetryMiddleware::delayBeforeRetry(int attempt) {
  int64_t nominal = retryNominalDelayMillis(config_, attempt);
  if (config_.jitter <= 0.0 || nominal == 0) return nominal;
  double u = 0;
  {
    std::lock_guard lock(rngMu_);
    u = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  }
  return backoffJittered(nominal, config_.jitter, u);
}

bool RetryMiddleware::retryable(ErrorCode code) const {
  return std::find(config_.retryOn.begin(), config_.retryOn.end(), code) != config_.retryOn.end();
}

std::string RetryMiddleware::describe() const {
  std::vector<std::string> codes;
  for (ErrorCode code : config_.retryOn) codes.emplace_back(errorCodeName(code));
  return "retry(attempts = " + std::to_string(config_.attempts) +
         ", initialDelayMs = " + std::to_string(config_.initialDelayMs) +
         ", multiplier = " + optionValueText(config_.multiplier) +
         ", maxDelayMs = " + std::to_string(config_.maxDelayMs) +
         ", jitter = " + optionValueText(config_.jitter) + ", retryOn = " + optionValueText(codes) +
         ")";
}

}  // namespace loom::middleware
