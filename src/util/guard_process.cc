#include "guard_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <initializer_list>

namespace loom {
namespace {

// The signals sent to the group that the guard leaves to the command.
sigset_t relayedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
  return set;
}

// The command, after fork: its folder and signal mask, then exec (its stdio is in place). On
// failure the errno goes to the report pipe (loom reads it) and it exits 127.
[[noreturn]] void execCommand(const GuardPlan& plan) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // loom blocks SIGPIPE, the guard more
  if (plan.workingDirectory[0] != '\0' && chdir(plan.workingDirectory) != 0) {
    int e = errno;
    (void)!write(kGuardReportFd, &e, sizeof e);
    _exit(127);
  }
  execve(plan.program, plan.argv, plan.envp);
  int e = errno;
  (void)!write(kGuardReportFd, &e, sizeof e);
  _exit(127);
}

void killGroupOnParentDeath(int) { kill(0, SIGKILL); }

// Gives `sig` its handler and unblocks it.
void handleAndUnblock(int sig, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigaction(sig, &action, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
}

// Exits as the command ended: with its status, or by the signal that killed it.
[[noreturn]] void relayStatus(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  int sig = WTERMSIG(status);
  handleAndUnblock(sig, SIG_DFL);
  kill(getpid(), sig);
  _exit(128 + sig);
}

}  // namespace

void keepOnlyStdio(int in, int out, int err, int report) {
  int fds[4] = {in, out, err, report};
  for (int& fd : fds) fd = fcntl(fd, F_DUPFD, 10);  // out of the way of 0..3
  for (int i = 0; i < 4; ++i) dup2(fds[i], i);
  close_range(kGuardReportFd + 1, ~0U, 0);
}

void runGuard(const GuardPlan& plan, pid_t loom) {
  fcntl(kGuardReportFd, F_SETFD, FD_CLOEXEC);  // the command's exec closes it: loom reads EOF
  setpgid(0, 0);
  sigset_t relayed = relayedSignals();
  sigprocmask(SIG_BLOCK, &relayed, nullptr);  // before the fork: the command resets its mask
  handleAndUnblock(SIGUSR1, killGroupOnParentDeath);
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
  if (getppid() != loom) kill(0, SIGKILL);  // loom died before the line above
  pid_t command = fork();
  if (command == 0) execCommand(plan);
  for (int fd = 0; fd <= kGuardReportFd; ++fd) close(fd);
  if (command < 0) _exit(127);
  int status = 0;
  while (waitpid(command, &status, 0) < 0) {
    if (errno != EINTR) _exit(127);
  }
  relayStatus(status);
}

}  // namespace loom
