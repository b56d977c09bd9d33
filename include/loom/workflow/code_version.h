// The code a run started on (issue "Change code under live runs safely"; ADR 0029): every run
// records its code version in its EXECUTION_STARTED ("codeVersion"), and under the default
// versioning, "pinned", continues only on that version (WorkflowRuntime refuses another with
// VersionMismatchError). A version is a short string:
// - "build:<hex>": the build of the program's native code that holds Loom (the executable, or
//   the Python or Node.js module): its ELF build id, which every rebuild changes;
// - "app:<hex>": an agent app file's (agent_app::AgentApp::codeVersion): a digest of the app
//   file and of every file it names inside its folder (the model script, tool programs);
// - anything a host declares (RuntimeOptions::codeVersion, app::BootOptions::codeVersion).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "loom/util/error.h"

namespace loom::workflow {

// "build:" and the ELF build id of the loaded object that holds this code (the `loom`
// executable, or the language module that embeds the core); when it has none, "build:" and
// the first 16 bytes of the object file's SHA-256. Computed once per process.
const std::string& programCodeVersion();

// `prefix` and the first 16 bytes (32 hex digits) of a SHA-256 over each file's name
// (relative to `base` when given, so a folder moved elsewhere keeps its version) and bytes, in
// the order given. Throws NotFoundError naming a file it cannot read.
std::string filesCodeVersion(std::string_view prefix,
                             const std::vector<std::filesystem::path>& files,
                             const std::filesystem::path& base = {});

// A run recorded `recorded` and the code at hand is `current`: under "pinned" it does not
// continue here. The message names both versions and what to do.
class VersionMismatchError : public FailedPreconditionError {
 public:
  VersionMismatchError(const std::string& executionId, const std::string& recorded,
                       const std::string& current);
  // `e` with `more` added to its message.
  VersionMismatchError(const VersionMismatchError& e, const std::string& more)
      : FailedPreconditionError(std::string(e.what()) + more),
        recorded_(e.recorded_),
        current_(e.current_) {}
  const std::string& recorded() const { return recorded_; }
  const std::string& current() const { return current_; }

 private:
  std::string recorded_;
  std::string current_;
};

}  // namespace loom::workflow
