// Configuration of the timeout middleware (an `execution.effectMiddleware` entry with
// kind = "timeout"). The limits are also rows of the app's option table (docs/config.md).
// Plain values; validation is a pure function.
#pragma once

#include <cstdint>
#include <string_view>

#include "loom/middleware/config_issue.h"

namespace loom::middleware {

inline constexpr std::string_view kTimeoutName = "timeout";
inline constexpr int64_t kTimeoutMaxMillis = 86'400'000;  // one day

struct TimeoutConfig {
  // How long one call may take, in milliseconds. 1..kTimeoutMaxMillis.
  int64_t ms = 30'000;
};

// Every problem of `config`, paths written "<path>.<field>".
ConfigIssues validateTimeoutConfig(const TimeoutConfig& config, std::string_view path);

}  // namespace loom::middleware
