#include "loom/middleware/retry_config.h"

#include <string>

#include "loom/middleware/middleware_factory.h"
#include "loom/middleware/retry.h"
#include "loom/util/backoff.h"

namespace loom::middleware {

ConfigIssues validateRetryConfig(const RetryConfig& config, std::string_view path) {
  ConfigIssues issues;
  auto add = [&](std::string_view field, std::string message) {
    issues.push_back({std::string(path) + "." + std::string(field), std::move(message)});
  };
  if (config.attempts < 1 || config.attempts > kRetryMaxAttempts) {
    add("attempts", "expected an integer from 1 to " + std::to_string(kRetryMaxAttempts) +
                        ", got " + std::to_string(config.attempts));
  }
  if (config.initialDelayMs < 0 || config.initialDelayMs > kRetryMaxDelayMillis) {
    add("initialDelayMs", "expected an integer from 0 to " + std::to_string(kRetryMaxDelayMillis) +
                              ", got " + std::to_string(config.initialDelayMs));
  }
  if (config.maxDelayMs < 0 || config.maxDelayMs > kRetryMaxDelayMillis) {
    add("maxDelayMs", "expected an integer from 0 to " + std::to_string(kRetryMaxDelayMillis) +
                          ", got " + std::to_string(config.maxDelayMs));
  } else if (config.maxDelayMs < config.initialDelayMs) {
    add("maxDelayMs", "expected at least initialDelayMs (" + std::to_string(config.initialDelayMs) +
                          "), got " + std::to_string(config.maxDelayMs));
  }
  if (!(config.multiplier >= 1.0 && config.multiplier <= kRetryMaxMultiplier)) {
    add("multiplier", "expected a number from 1 to " +
                          std::to_string(static_cast<int>(kRetryMaxMultiplier)) + ", got " +
                          std::to_string(config.multiplier));
  }
  if (!(config.jitter >= 0.0 && config.jitter <= 1.0)) {
    add("jitter", "expected a number from 0 to 1, got " + std::to_string(config.jitter));
  }
  if (config.retryOn.empty()) {
    add("retryOn", "expected at least one error code (set attempts = 1 to never retry)");
  }
  if (!config.clock) add("clock", "expected a clock, got null");
  return issues;
}

int64_t retryNominalDelayMillis(const RetryConfig& config, int attempt) {
  return backoffNominalMillis(config.initialDelayMs, config.multiplier, config.maxDelayMs, attempt);
}

MiddlewareFactory retryFactory() {
  using Type = EntryOption::Type;
  std::vector<std::string> codes;
  for (int i = 0; i <= static_cast<int>(ErrorCode::kStepFailed); ++i) {
    codes.emplace_back(errorCodeName(static_cast<ErrorCode>(i)));
  }
  MiddlewareFactory f;
  f.kind = kRetryName;
  f.options = {
      {"attempts",
       Type::kInteger,
       "3",
       1,
       kRetryMaxAttempts,
       {},
       "Tries in all, the first included (1 never retries)."},
      {"initialDelayMs",
       Type::kInteger,
       "100",
       0,
       static_cast<double>(kRetryMaxDelayMillis),
       {},
       "Delay before the second try, in milliseconds."},
      {"multiplier",
       Type::kNumber,
       "2",
       1,
       kRetryMaxMultiplier,
       {},
       "Each later delay is this many times the previous one."},
      {"maxDelayMs",
       Type::kInteger,
       "10000",
       0,
       static_cast<double>(kRetryMaxDelayMillis),
       {},
       "Cap of any one delay, in milliseconds; at least initialDelayMs."},
      {"jitter",
       Type::kNumber,
       "0.2",
       0,
       1,
       {},
       "Each delay is scaled by a random factor in [1 - jitter, 1]."},
      {"retryOn", Type::kStringList, "[\"unavailable\", \"deadlineExceeded\"]", std::nullopt,
       std::nullopt, std::move(codes),
       "Error codes worth another try; any other error fails at once."},
  };
  f.build = [](const OptionEntry& entry, const std::string& entryPath,
               ConfigIssues& issues) -> std::shared_ptr<effects::Middleware> {
    RetryConfig config;
    for (const auto& [key, value] : entry) {
      if (key == "attempts") config.attempts = static_cast<int>(optionInteger(value));
      if (key == "initialDelayMs") config.initialDelayMs = optionInteger(value);
      if (key == "multiplier") config.multiplier = optionNumber(value);
      if (key == "maxDelayMs") config.maxDelayMs = optionInteger(value);
      if (key == "jitter") config.jitter = optionNumber(value);
      if (key == "retryOn") {
        config.retryOn.clear();
        for (const auto& name : std::get<std::vector<std::string>>(value)) {
          config.retryOn.push_back(errorCodeFromName(name));
        }
      }
    }
    ConfigIssues found = validateRetryConfig(config, entryPath);
    if (!found.empty()) {
      issues.insert(issues.end(), found.begin(), found.end());
      return nullptr;
    }
    return std::make_shared<RetryMiddleware>(std::move(config));
  };
  return f;
}

}  // namespace loom::middleware
