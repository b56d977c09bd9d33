#include "loom/middleware/config_issue.h"

#include <cstdio>
#include <string>

#include "loom/middleware/warn_sink.h"

namespace loom::middleware {

std::string formatIssues(const ConfigIssues& issues) {
  std::string out;
  for (const auto& issue : issues) {
    if (!out.empty()) out += '\n';
    out += issue.path.empty() ? issue.message : issue.path + ": " + issue.message;
  }
  return out;
}

void warn(const WarnSink& sink, std::string_view message) {
  if (sink) {
    sink(message);
    return;
  }
  std::fprintf(stderr, "loom: warning: %.*s\n", static_cast<int>(message.size()), message.data());
}

}  // namespace loom::middleware
