#include "loom/middleware/timeout_config.h"

#include <string>

#include "loom/middleware/middleware_factory.h"
#include "loom/middleware/timeout.h"

namespace loom::middleware {

ConfigIssues validateTimeoutConfig(const TimeoutConfig& config, std::string_view path) {
  ConfigIssues issues;
  if (config.ms < 1 || config.ms > kTimeoutMaxMillis) {
    issues.push_back({std::string(path) + ".ms",
                      "expected an integer from 1 to " + std::to_string(kTimeoutMaxMillis) +
                          " (milliseconds), got " + std::to_string(config.ms)});
  }
  return issues;
}

MiddlewareFactory timeoutFactory() {
  MiddlewareFactory f;
  f.kind = kTimeoutName;
  f.options = {{"ms",
                EntryOption::Type::kInteger,
                "30000",
                1,
                static_cast<double>(kTimeoutMaxMillis),
                {},
                "How long one call may take, in milliseconds. A call that takes longer fails "
                "with deadlineExceeded and keeps running in the background."}};
  f.build = [](const OptionEntry& entry, const std::string& entryPath,
               ConfigIssues& issues) -> std::shared_ptr<effects::Middleware> {
    TimeoutConfig config;
    for (const auto& [key, value] : entry) {
      if (key == "ms") config.ms = optionInteger(value);
    }
    ConfigIssues found = validateTimeoutConfig(config, entryPath);
    if (!found.empty()) {
      issues.insert(issues.end(), found.begin(), found.end());
      return nullptr;
    }
    return std::make_shared<TimeoutMiddleware>(config);
  };
  return f;
}

}  // namespace loom::middleware
