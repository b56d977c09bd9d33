// Durable retries (`execution.retry`, docs/operations.md "Retries"): an effect failure that is
// retryable and still failing after the in-process retries (the retry middleware, a provider's
// own retries) is recorded as a retryable STEP_FAILED with its next attempt time, and the run
// parks with reason "retrying" until then; a worker (or `loom retry`) runs the step again. A
// failure that is not retryable, or the last of maxAttempts, fails the step for good as before.
// Plain values; thread-safe as values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/util/error.h"

namespace loom::workflow {

inline constexpr int kMaxRetryAttempts = 1000;
inline constexpr int64_t kMaxRetryIntervalMillis = 86'400'000;  // one day
inline constexpr double kMaxRetryMultiplier = 10.0;

struct RetryPolicy {
  // Attempts in all, the first included, counted across processes (1 = fail at the first
  // retryable failure, as before durable retries). 1..kMaxRetryAttempts.
  int maxAttempts = 10;
  // Wait before the second attempt; each later wait is `multiplier` times the previous one,
  // capped at maxIntervalMillis. 1..kMaxRetryIntervalMillis.
  int64_t initialIntervalMillis = 1'000;
  int64_t maxIntervalMillis = 300'000;  // initialIntervalMillis..kMaxRetryIntervalMillis
  double multiplier = 2.0;              // 1..kMaxRetryMultiplier
  // Each wait is scaled by a random factor in [1 - jitter, 1]. 0..1.
  double jitter = 0.2;
};

// Per effect id (`execution.retry.effects.<id>`): the fields it sets replace the default's.
struct RetryOverride {
  std::optional<int> maxAttempts;
  std::optional<int64_t> initialIntervalMillis;
  std::optional<int64_t> maxIntervalMillis;
  std::optional<double> multiplier;
  std::optional<double> jitter;
};

struct DurableRetry {
  RetryPolicy policy;
  std::map<std::string, RetryOverride, std::less<>> effects;
  // A wait of at most this long is waited out by the process that ran the attempt (holding no
  // lease meanwhile, so a worker may take the run when it is due); a longer one parks the run
  // and the call returns it parked "retrying". 0: always return at once.
  // 0..kMaxRetryIntervalMillis.
  int64_t waitInlineUpToMillis = 30'000;

  // The policy of effect `effectId`: `policy` with its override's fields on top.
  RetryPolicy forEffect(std::string_view effectId) const;
};

// Every field of `retry` (or of an override, merged) out of range, each with its option path
// ("execution.retry.maxIntervalMs", "execution.retry.effects.search.maxAttempts").
struct RetryProblem {
  std::string path;
  std::string message;
};
std::vector<RetryProblem> durableRetryProblems(const DurableRetry& retry);
// Throws InvalidArgumentError listing durableRetryProblems(retry), when there are any.
void validateDurableRetry(const DurableRetry& retry);

// Whether a failure with `code` is worth another attempt later: unavailable (a server down,
// rate-limited, a content store that took no write) and deadlineExceeded. Invalid arguments,
// refusals and everything else fail at once.
bool isRetryableFailure(ErrorCode code);

// Milliseconds to wait after failed attempt `attempt` (>= 1): the policy's backoff, jittered by
// `u` in [0, 1), and never less than `retryAfterMillis` (a server's Retry-After; -1: none).
int64_t retryDelayMillis(const RetryPolicy& policy, int attempt, double u,
                         int64_t retryAfterMillis = -1);

}  // namespace loom::workflow
