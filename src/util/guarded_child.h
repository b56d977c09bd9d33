// Starting a child process that cannot outlive loom: the command runs in a process group of
// its own, led by a small guard process. The guard relays the command's exit status (a signal
// that killed it is raised again), ignores the SIGTERM, SIGINT, SIGHUP and SIGQUIT sent to the
// group (so the command's own exit is what is reported), and kills the whole group when loom
// dies (a parent-death signal: SIGKILL of loom included), so no command or grandchild is left
// running. The guard holds nothing of loom's open but the command's stdio. It is the program
// loom-guard (guard_process.h), spawned, so starting a command costs the same however large
// loom has grown; where that program is not installed, a fork of loom. Used by subprocess
// tools (loom/util/subprocess.h) and MCP servers (providers/mcp_process.h).
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace loom {

struct GuardedCommand {
  std::vector<std::string>
      argv;                      // argv[0]: a path (relative to workingDirectory) or a name on PATH
  std::string workingDirectory;  // empty: loom's
  std::map<std::string, std::string> extraEnv;  // set on top (child_environment.h)
  bool inheritEnv = true;  // loom's environment less every secret variable; false: the base ones
};

// How the guard starts: kFork forks it even when loom-guard is there (the tests of that way).
enum class GuardStart { kProgramIfThere, kFork };

// Starts `command` with `in`, `out` and `err` as its stdin, stdout and stderr (the child's ends
// of pipes; the caller closes its copies afterwards). Returns the guard's pid, also the group's id:
// signal the group with kill(-pid, ...) and reap the guard with waitpid(pid, ...). Throws
// UnavailableError naming argv[0] and why when the command cannot be started.
pid_t startGuarded(const GuardedCommand& command, int in, int out, int err,
                   GuardStart how = GuardStart::kProgramIfThere);

}  // namespace loom
