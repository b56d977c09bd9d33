#include "loom/middleware/retry_config.h"

#include <cmath>
#include <string>

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
  double delay = static_cast<double>(config.initialDelayMs) *
                 std::pow(config.multiplier, static_cast<double>(attempt - 1));
  double cap = static_cast<double>(config.maxDelayMs);
  return static_cast<int64_t>(std::min(delay, cap));
}

}  // namespace loom::middleware
