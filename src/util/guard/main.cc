// loom-guard: the guard of a guarded child (util/guard_process.h) as a program of its own, so
// starting one costs loom a posix_spawn whatever loom's size (util/guarded_child.cc spawns it).
// Arguments: kGuardProtocol, loom's pid, the working folder ("" for this one), the program's
// path, then the command's argv; its environment is the command's.

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "util/guard_process.h"

int main(int argc, char** argv, char** envp) {
  if (argc < 6 || std::strcmp(argv[1], loom::kGuardProtocol) != 0) {
    int refused = loom::kGuardRefused;  // another build's loom: it forks its own guard
    (void)!write(loom::kGuardReportFd, &refused, sizeof refused);
    return 127;
  }
  loom::GuardPlan plan{argv[4], argv + 5, envp, argv[3]};
  loom::runGuard(plan, static_cast<pid_t>(std::strtol(argv[2], nullptr, 10)));
}
