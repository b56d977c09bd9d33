#include "effect_middleware_entry.h"

#include "loom/middleware/retry.h"
#include "loom/middleware/timeout.h"

namespace loom::app {
namespace {

int64_t asInt(const OptionValue& v) { return std::get<int64_t>(v); }
double asNumber(const OptionValue& v) {
  return std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v))
                                            : std::get<double>(v);
}

std::string describe(const effects::Middleware& m) {
  if (const auto* retry = dynamic_cast<const middleware::RetryMiddleware*>(&m)) {
    const auto& c = retry->config();
    std::vector<std::string> codes;
    for (ErrorCode code : c.retryOn) codes.emplace_back(errorCodeName(code));
    return "retry(attempts = " + std::to_string(c.attempts) +
           ", initialDelayMs = " + std::to_string(c.initialDelayMs) +
           ", multiplier = " + optionValueText(c.multiplier) +
           ", maxDelayMs = " + std::to_string(c.maxDelayMs) +
           ", jitter = " + optionValueText(c.jitter) + ", retryOn = " + optionValueText(codes) +
           ")";
  }
  if (const auto* timeout = dynamic_cast<const middleware::TimeoutMiddleware*>(&m)) {
    return "timeout(ms = " + std::to_string(timeout->config().ms) + ")";
  }
  return std::string(m.name());
}

}  // namespace

void addEffectMiddlewareEntry(Config& c, const OptionEntry& entry, const std::string& entryPath,
                              ConfigIssues& issues) {
  std::string kind;
  for (const auto& [key, value] : entry) {
    if (key == "kind") kind = std::get<std::string>(value);
  }
  if (kind == middleware::kRetryName) {
    middleware::RetryConfig config;
    for (const auto& [key, value] : entry) {
      if (key == "attempts") config.attempts = static_cast<int>(asInt(value));
      if (key == "initialDelayMs") config.initialDelayMs = asInt(value);
      if (key == "multiplier") config.multiplier = asNumber(value);
      if (key == "maxDelayMs") config.maxDelayMs = asInt(value);
      if (key == "jitter") config.jitter = asNumber(value);
      if (key == "retryOn") {
        config.retryOn.clear();
        for (const auto& name : std::get<std::vector<std::string>>(value)) {
          config.retryOn.push_back(errorCodeFromName(name));
        }
      }
    }
    ConfigIssues found = middleware::validateRetryConfig(config, entryPath);
    if (!found.empty()) {
      issues.insert(issues.end(), found.begin(), found.end());
      return;
    }
    c.execution.effectMiddleware.push_back(
        std::make_shared<middleware::RetryMiddleware>(std::move(config)));
  } else if (kind == middleware::kTimeoutName) {
    middleware::TimeoutConfig config;
    for (const auto& [key, value] : entry) {
      if (key == "ms") config.ms = asInt(value);
    }
    ConfigIssues found = middleware::validateTimeoutConfig(config, entryPath);
    if (!found.empty()) {
      issues.insert(issues.end(), found.begin(), found.end());
      return;
    }
    c.execution.effectMiddleware.push_back(std::make_shared<middleware::TimeoutMiddleware>(config));
  }
}

std::string showEffectMiddleware(const Config& c) {
  std::string out = "[";
  for (const auto& m : c.execution.effectMiddleware) {
    if (out.size() > 1) out += ", ";
    out += m ? describe(*m) : "<null>";
  }
  return out + "]";
}

}  // namespace loom::app
