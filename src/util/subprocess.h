// Runs a command as a child process: writes `input` to its stdin, collects stdout and the tail
// of stderr, waits at most a deadline. Used by subprocess tools. The command is an argv
// vector (no shell). The command runs in a process group of its own, led by a small guard
// process: on the deadline, when stdout passes its cap, and once the command has exited (a
// background child it left holding stdout open), the whole group is killed; when loom itself
// dies (SIGKILL included) the guard's parent-death signal kills the group too, so no tool or
// grandchild outlives loom. Thread-safe: each call owns its child.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom {

struct SubprocessResult {
  int exitCode = -1;            // exit status; -1 when killed by a signal
  int signal = 0;               // the signal that ended it, 0 when it exited
  bool timedOut = false;        // killed because the deadline passed
  bool outputTooLarge = false;  // killed because stdout passed maxOutputBytes
  bool errTruncated = false;    // err holds only the last maxStderrBytes of stderr
  std::string out;
  std::string err;
};

struct SubprocessOptions {
  int64_t timeoutMillis = 30'000;
  std::string workingDirectory;                 // empty = inherit
  std::map<std::string, std::string> extraEnv;  // added to the inherited environment
  // The parent's environment (less every secret variable, child_environment.h); false: only
  // its base variables (PATH, HOME, ...) and extraEnv.
  bool inheritEnv = true;
  std::size_t maxOutputBytes = 64 << 20;  // more stdout is an error (the child is killed)
  std::size_t maxStderrBytes = 64 << 10;  // only this much of stderr's end is kept
};

// Throws UnavailableError when the command cannot be started (naming it and why).
SubprocessResult runSubprocess(const std::vector<std::string>& argv, const std::string& input,
                               const SubprocessOptions& options = {});

}  // namespace loom
