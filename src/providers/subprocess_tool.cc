#include "loom/providers/subprocess_tool.h"

#include "loom/effects/taint.h"
#include "loom/util/error.h"
#include "util/subprocess.h"

namespace loom::providers {

SubprocessTool::SubprocessTool(agent::ToolDefinition definition, SubprocessToolOptions options)
    : definition_(std::move(definition)), options_(std::move(options)) {
  if (options_.command.empty()) {
    throw InvalidArgumentError("tool '" + definition_.name + "' needs a command");
  }
}

json::value SubprocessTool::call(const effects::EffectContext& ctx,
                                 const json::value& arguments) {
  SubprocessOptions opts;
  opts.timeoutMillis = options_.timeoutMillis;
  opts.workingDirectory = options_.workingDirectory;
  opts.extraEnv = options_.env;
  // Which call this is: a tool that must not act twice (a payment) keys its action on both,
  // the same when a call in flight at a crash runs again.
  opts.extraEnv["LOOM_EXECUTION_ID"] = ctx.executionId;
  opts.extraEnv["LOOM_STEP_ID"] = ctx.stepId;
  opts.inheritEnv = options_.inheritEnv;
  SubprocessResult r = runSubprocess(options_.command, json::toText(arguments) + "\n", opts);
  const std::string& name = definition_.name;
  auto stderrTail = [&] {
    std::string e = r.err.size() > 2000 ? r.err.substr(r.err.size() - 2000) : r.err;
    return e.empty() ? std::string() : "; stderr: " + e;
  };
  if (r.outputTooLarge) {
    throw InvalidArgumentError("tool '" + name + "' wrote more than " +
                               std::to_string(opts.maxOutputBytes) +
                               " bytes to stdout, the cap of a tool result; it was killed. "
                               "Make it return less (or a reference to the data)" +
                               stderrTail());
  }
  if (r.timedOut) {
    throw DeadlineExceededError("tool '" + name + "' took longer than " +
                                std::to_string(options_.timeoutMillis) + " ms and was killed" +
                                stderrTail());
  }
  if (r.exitCode != 0) {
    throw InvalidArgumentError("tool '" + name + "' exited with " +
                               (r.signal ? "signal " + std::to_string(r.signal)
                                         : "status " + std::to_string(r.exitCode)) +
                               stderrTail());
  }
  json::value result;
  try {
    result = json::parse(r.out, "tool '" + name + "' stdout");
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(std::string(e.what()) + stderrTail());
  }
  if (options_.untrusted) return effects::tainted(std::move(result), "tool:" + name);
  return result;
}

}  // namespace loom::providers
