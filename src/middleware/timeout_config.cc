#include "loom/middleware/timeout_config.h"

#include <string>

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

}  // namespace loom::middleware
