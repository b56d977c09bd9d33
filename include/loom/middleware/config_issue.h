// One problem found while validating configuration: the full option path it concerns
// ("storage.eventStore.durability", "execution.effectMiddleware[1].attempts") and what is
// expected there. Middleware config validators return lists of them so that the app's
// configuration (loom::app) can report every problem of a config at once. Plain values.
#pragma once

#include <string>
#include <vector>

namespace loom::middleware {

struct ConfigIssue {
  std::string path;     // full option path; empty when the problem concerns the whole file
  std::string message;  // what is wrong and what is expected, e.g. "expected one of ..."
};

using ConfigIssues = std::vector<ConfigIssue>;

// "path: message" lines, one per issue, for a ConfigError message.
std::string formatIssues(const ConfigIssues& issues);

}  // namespace loom::middleware
