#include "loom/workflow/retry_policy.h"

#include <algorithm>
#include <string>

#include "loom/util/backoff.h"

namespace loom::workflow {
namespace {

void validatePolicy(const RetryPolicy& p, const std::string& at, std::vector<RetryProblem>& out) {
  auto check = [&](bool ok, const char* field, const std::string& expected) {
    if (!ok) out.push_back({at + "." + field, "expected " + expected});
  };
  check(p.maxAttempts >= 1 && p.maxAttempts <= kMaxRetryAttempts, "maxAttempts",
        "1.." + std::to_string(kMaxRetryAttempts) + ", got " + std::to_string(p.maxAttempts));
  check(p.initialIntervalMillis >= 1 && p.initialIntervalMillis <= kMaxRetryIntervalMillis,
        "initialIntervalMs",
        "1.." + std::to_string(kMaxRetryIntervalMillis) + ", got " +
            std::to_string(p.initialIntervalMillis));
  check(p.maxIntervalMillis >= p.initialIntervalMillis &&
            p.maxIntervalMillis <= kMaxRetryIntervalMillis,
        "maxIntervalMs",
        "initialIntervalMs (" + std::to_string(p.initialIntervalMillis) + ").." +
            std::to_string(kMaxRetryIntervalMillis) + ", got " +
            std::to_string(p.maxIntervalMillis));
  check(p.multiplier >= 1.0 && p.multiplier <= kMaxRetryMultiplier, "multiplier",
        "1..10, got " + std::to_string(p.multiplier));
  check(p.jitter >= 0.0 && p.jitter <= 1.0, "jitter", "0..1, got " + std::to_string(p.jitter));
}

}  // namespace

RetryPolicy DurableRetry::forEffect(std::string_view effectId) const {
  RetryPolicy p = policy;
  auto it = effects.find(effectId);
  if (it == effects.end()) return p;
  const RetryOverride& o = it->second;
  if (o.maxAttempts) p.maxAttempts = *o.maxAttempts;
  if (o.initialIntervalMillis) p.initialIntervalMillis = *o.initialIntervalMillis;
  if (o.maxIntervalMillis) p.maxIntervalMillis = *o.maxIntervalMillis;
  if (o.multiplier) p.multiplier = *o.multiplier;
  if (o.jitter) p.jitter = *o.jitter;
  return p;
}

std::vector<RetryProblem> durableRetryProblems(const DurableRetry& retry) {
  std::vector<RetryProblem> out;
  validatePolicy(retry.policy, "execution.retry", out);
  if (retry.waitInlineUpToMillis < 0 || retry.waitInlineUpToMillis > kMaxRetryIntervalMillis) {
    out.push_back({"execution.retry.waitInlineUpToMs",
                   "expected 0.." + std::to_string(kMaxRetryIntervalMillis) + ", got " +
                       std::to_string(retry.waitInlineUpToMillis)});
  }
  for (const auto& [id, o] : retry.effects) {
    // Only what the override sets (a default out of range is reported once, above).
    std::vector<RetryProblem> merged;
    std::string at = "execution.retry.effects." + id;
    validatePolicy(retry.forEffect(id), at, merged);
    for (auto& p : merged) {
      std::string field = p.path.substr(at.size() + 1);
      bool set = (field == "maxAttempts" && o.maxAttempts) ||
                 (field == "initialIntervalMs" && o.initialIntervalMillis) ||
                 (field == "maxIntervalMs" && (o.maxIntervalMillis || o.initialIntervalMillis)) ||
                 (field == "multiplier" && o.multiplier) || (field == "jitter" && o.jitter);
      if (set) out.push_back(std::move(p));
    }
  }
  return out;
}

void validateDurableRetry(const DurableRetry& retry) {
  auto problems = durableRetryProblems(retry);
  if (problems.empty()) return;
  std::string text = "invalid durable retry policy:";
  for (const auto& p : problems) text += "\n  " + p.path + ": " + p.message;
  throw InvalidArgumentError(text);
}

bool isRetryableFailure(ErrorCode code) {
  return code == ErrorCode::kUnavailable || code == ErrorCode::kDeadlineExceeded;
}

int64_t retryDelayMillis(const RetryPolicy& policy, int attempt, double u,
                         int64_t retryAfterMillis) {
  int64_t nominal = backoffNominalMillis(policy.initialIntervalMillis, policy.multiplier,
                                         policy.maxIntervalMillis, attempt);
  return std::max(backoffJittered(nominal, policy.jitter, u),
                  std::min(retryAfterMillis, kMaxRetryIntervalMillis));
}

}  // namespace loom::workflow
