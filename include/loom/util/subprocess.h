// Runs a command as a child process: writes `input` to its stdin, collects stdout and stderr,
// waits at most a deadline (then kills it with SIGKILL). Used by subprocess tools. The
// command is an argv vector (no shell). Thread-safe: each call owns its child.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom {

struct SubprocessResult {
  int exitCode = -1;     // exit status; -1 when killed by a signal
  int signal = 0;        // the signal that ended it, 0 when it exited
  bool timedOut = false; // killed because the deadline passed
  std::string out;
  std::string err;
};

struct SubprocessOptions {
  int64_t timeoutMillis = 30'000;
  std::string workingDirectory;               // empty = inherit
  std::map<std::string, std::string> extraEnv; // added to the inherited environment
  // The parent's environment (less every secret variable, child_environment.h); false: only
  // its base variables (PATH, HOME, ...) and extraEnv.
  bool inheritEnv = true;
  std::size_t maxOutputBytes = 64 << 20;      // more stdout is an error (the child is killed)
};

// Throws UnavailableError when the command cannot be started (naming it and why).
SubprocessResult runSubprocess(const std::vector<std::string>& argv, const std::string& input,
                               const SubprocessOptions& options = {});

}  // namespace loom
