// A tool that is a program: Loom writes the JSON arguments to its stdin and reads one JSON
// value from its stdout. A non-zero exit, output that is not JSON, or a timeout is a failed
// call (a typed loom::Error naming the tool, with the end of its stderr), which the agent loop
// tells the model about. An `untrusted` tool's results are recorded as tainted(result,
// "tool:<name>") (ADR 0085). Thread-safe: each call starts its own process.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "loom/agent/tool.h"

namespace loom::providers {

struct SubprocessToolOptions {
  std::vector<std::string> command;  // argv; relative paths resolve against workingDirectory
  std::string workingDirectory;      // empty = the current one
  int64_t timeoutMillis = 30'000;
  bool untrusted = false;
  std::map<std::string, std::string> env;  // set on top of what it inherits
  bool inheritEnv = true;                  // SubprocessOptions::inheritEnv
};

class SubprocessTool : public agent::Tool {
 public:
  SubprocessTool(agent::ToolDefinition definition, SubprocessToolOptions options);
  const agent::ToolDefinition& definition() const override { return definition_; }
  json::value call(const effects::EffectContext& ctx, const json::value& arguments) override;

 private:
  agent::ToolDefinition definition_;
  SubprocessToolOptions options_;
};

}  // namespace loom::providers
