// Exponential backoff with a cap and jitter: the one formula behind the retry middleware's
// in-process retries (middleware/retry.h) and the runtime's durable retries
// (workflow/retry_policy.h). Pure functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace loom {

// The nominal delay after failed try `attempt` (>= 1), before jitter:
// min(capMillis, initialMillis * multiplier^(attempt - 1)).
inline int64_t backoffNominalMillis(int64_t initialMillis, double multiplier, int64_t capMillis,
                                    int attempt) {
  double delay = static_cast<double>(initialMillis) *
                 std::pow(multiplier, static_cast<double>(std::max(attempt, 1) - 1));
  return static_cast<int64_t>(std::min(delay, static_cast<double>(capMillis)));
}

// `nominal` scaled by 1 - jitter * u, with u uniform in [0, 1): many callers that failed
// together do not retry together. The result is in [nominal * (1 - jitter), nominal].
inline int64_t backoffJittered(int64_t nominal, double jitter, double u) {
  if (jitter <= 0.0 || nominal <= 0) return std::max<int64_t>(nominal, 0);
  double scaled = static_cast<double>(nominal) * (1.0 - jitter * u);
  return std::clamp<int64_t>(static_cast<int64_t>(scaled), 0, nominal);
}

}  // namespace loom
