// The guard of a guarded child (guarded_child.h): leader of the command's process group, it
// starts the command, relays its exit status, ignores the stop signals sent to the group and
// kills the group when loom dies. It runs either as the program loom-guard (guard/main.cc, what
// startGuarded spawns) or, when that program is not installed, in a fork of loom: so only
// async-signal-safe calls here, nothing that allocates.
#pragma once

#include <sys/types.h>

namespace loom {

// What the guard execs: all prepared by loom before the guard starts.
struct GuardPlan {
  const char* program;  // the resolved path
  char* const* argv;
  char* const* envp;
  const char* workingDirectory;  // "": the guard's own
};

// Where the guard and the command find the pipe that reports an exec failure (an errno).
constexpr int kGuardReportFd = 3;

// loom-guard's arguments: kGuardProtocol, loom's pid, the working folder, the program, then the
// command's argv; its environment is the command's.
constexpr const char* kGuardProtocol = "loom-guard-1";

// What loom-guard writes to the report pipe, in place of an errno, when its arguments are not
// of kGuardProtocol (another build's guard): loom then forks its own guard.
constexpr int kGuardRefused = -1;

// Puts `in`, `out` and `err` at 0, 1 and 2 and `report` at kGuardReportFd, and closes every
// other descriptor (for the fork of loom: nothing of loom's may stay open in the guard).
void keepOnlyStdio(int in, int out, int err, int report);

// The guard itself, with the command's stdio at 0, 1, 2 and the report pipe at kGuardReportFd:
// never returns. `loom`: the pid whose death kills the group.
[[noreturn]] void runGuard(const GuardPlan& plan, pid_t loom);

}  // namespace loom
