// Configuration of the retry middleware (an `execution.effectMiddleware` entry with
// kind = "retry"): how many attempts, the exponential backoff between them (with jitter and a
// cap) and which error codes are worth retrying. The limits below are also the rows of the
// app's option table (docs/config.md). Plain values; validation is a pure function.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "loom/middleware/config_issue.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"

namespace loom::middleware {

inline constexpr std::string_view kRetryName = "retry";
inline constexpr int kRetryMaxAttempts = 100;
inline constexpr int64_t kRetryMaxDelayMillis = 3'600'000;  // one hour
inline constexpr double kRetryMaxMultiplier = 10.0;

struct RetryConfig {
  // Tries in all, the first included (1 = never retry). 1..kRetryMaxAttempts.
  int attempts = 3;
  // Delay before the second try; each later delay is `multiplier` times the previous one,
  // capped at maxDelayMs. 0..kRetryMaxDelayMillis.
  int64_t initialDelayMs = 100;
  double multiplier = 2.0;      // 1..kRetryMaxMultiplier
  int64_t maxDelayMs = 10'000;  // initialDelayMs..kRetryMaxDelayMillis
  // Each delay is scaled by a uniform random factor in [1 - jitter, 1], so many runs that
  // failed together do not retry together. 0..1.
  double jitter = 0.2;
  // The codes of loom::Error worth retrying; anything else (and any other exception) is
  // rethrown at once.
  std::vector<ErrorCode> retryOn = {ErrorCode::kUnavailable, ErrorCode::kDeadlineExceeded};
  // Sleeps between tries (a ManualClock in tests advances instead of sleeping).
  std::shared_ptr<const Clock> clock = systemClock();
  // Seed of the jitter's random numbers; 0 = a random seed.
  uint64_t seed = 0;
};

// Every problem of `config`, paths written "<path>.<field>" (e.g.
// "execution.effectMiddleware[0].attempts").
ConfigIssues validateRetryConfig(const RetryConfig& config, std::string_view path);

// The nominal delay before try `attempt` + 1 (attempt >= 1), before jitter:
// min(maxDelayMs, initialDelayMs * multiplier^(attempt - 1)).
int64_t retryNominalDelayMillis(const RetryConfig& config, int attempt);

}  // namespace loom::middleware
