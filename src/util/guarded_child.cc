#include "guarded_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "loom/util/error.h"
#include "util/child_environment.h"
#include "util/unique_fd.h"

namespace loom {
namespace {

// What the forked processes need, prepared before fork (after it, only async-signal-safe calls
// are allowed in a multi-threaded program).
struct ExecPlan {
  std::string program;  // the resolved path
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string workingDirectory;
  std::vector<char*> argvp;
  std::vector<char*> envp;
};

std::string resolveProgram(const std::string& name, const std::string& workingDirectory) {
  if (name.find('/') != std::string::npos) {
    std::filesystem::path p(name);
    return p.is_absolute() || workingDirectory.empty()
               ? name
               : (std::filesystem::path(workingDirectory) / p).string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t from = 0; from <= dirs.size();) {
    std::size_t to = dirs.find(':', from);
    if (to == std::string::npos) to = dirs.size();
    std::string dir = dirs.substr(from, to - from);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    from = to + 1;
  }
  return name;  // execve reports ENOENT
}

ExecPlan planOf(const GuardedCommand& command) {
  ExecPlan plan;
  plan.program = resolveProgram(command.argv.front(), command.workingDirectory);
  plan.argv = command.argv;
  plan.env = childEnvironment(ChildEnvironment{command.inheritEnv, command.extraEnv});
  plan.workingDirectory = command.workingDirectory;
  for (auto& a : plan.argv) plan.argvp.push_back(a.data());
  plan.argvp.push_back(nullptr);
  for (auto& e : plan.env) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  return plan;
}

constexpr int kReportFd = 3;  // in the guard and the command: where an exec failure is told

// The signals sent to the group that the guard leaves to the command.
sigset_t relayedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
  return set;
}

// The command, after fork: its folder and signal mask, then exec (its stdio is in place). On
// failure the errno goes to the report pipe (the parent reads it) and it exits 127.
[[noreturn]] void execCommand(const ExecPlan& plan) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // loom blocks SIGPIPE, the guard more
  if (!plan.workingDirectory.empty() && chdir(plan.workingDirectory.c_str()) != 0) {
    int e = errno;
    (void)!write(kReportFd, &e, sizeof e);
    _exit(127);
  }
  execve(plan.program.c_str(), plan.argvp.data(), plan.envp.data());
  int e = errno;
  (void)!write(kReportFd, &e, sizeof e);
  _exit(127);
}

void killGroupOnParentDeath(int) { kill(0, SIGKILL); }

// Puts the command's stdio at 0, 1, 2 and the report pipe at 3 (close-on-exec), and closes
// every other descriptor: the guard execs nothing, so nothing of loom's (its end of these
// pipes, another server's stdin, a database) may stay open in it. Async-signal-safe.
void keepOnlyStdio(int in, int out, int err, int report) {
  int fds[4] = {in, out, err, report};
  for (int& fd : fds) fd = fcntl(fd, F_DUPFD, 10);  // out of the way of 0..3
  for (int i = 0; i < 4; ++i) dup2(fds[i], i);
  fcntl(kReportFd, F_SETFD, FD_CLOEXEC);
  close_range(kReportFd + 1, ~0U, 0);
}

// Exits as the command ended: with its status, or by the signal that killed it.
[[noreturn]] void relayStatus(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  int sig = WTERMSIG(status);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  kill(getpid(), sig);
  _exit(128 + sig);
}

// The guard, after fork: leader of a new process group that the command and everything it
// starts belong to. Async-signal-safe calls only.
[[noreturn]] void runGuard(const ExecPlan& plan, pid_t loom, int in, int out, int err, int report) {
  keepOnlyStdio(in, out, err, report);
  setpgid(0, 0);
  sigset_t relayed = relayedSignals();
  sigprocmask(SIG_BLOCK, &relayed, nullptr);  // before the fork: the command resets its mask
  struct sigaction onDeath {};
  onDeath.sa_handler = killGroupOnParentDeath;
  sigaction(SIGUSR1, &onDeath, nullptr);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_UNBLOCK, &usr1, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
  if (getppid() != loom) kill(0, SIGKILL);  // loom died before the line above
  pid_t command = fork();
  if (command == 0) execCommand(plan);
  for (int fd = 0; fd <= kReportFd; ++fd) close(fd);
  if (command < 0) _exit(127);
  int status = 0;
  while (waitpid(command, &status, 0) < 0) {
    if (errno != EINTR) _exit(127);
  }
  relayStatus(status);
}

}  // namespace

pid_t startGuarded(const GuardedCommand& command, int in, int out, int err) {
  if (command.argv.empty()) throw InvalidArgumentError("a child process needs a command");
  ExecPlan plan = planOf(command);
  Pipe report = openPipe();
  pid_t loom = getpid();
  pid_t guard = fork();
  if (guard < 0) {
    int e = errno;
    throw UnavailableError("cannot start '" + plan.argv[0] + "': fork: " + strerror(e));
  }
  if (guard == 0) runGuard(plan, loom, in, out, err, report.write.get());  // never returns
  setpgid(guard, guard);  // also here, so a kill of the group cannot race the guard's own call
  report.write.reset();
  int e = 0;
  ssize_t n;
  while ((n = read(report.read.get(), &e, sizeof e)) < 0 && errno == EINTR) {
  }
  report.read.reset();
  if (n == static_cast<ssize_t>(sizeof e)) {
    kill(-guard, SIGKILL);
    while (waitpid(guard, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw UnavailableError("cannot start '" + plan.argv[0] + "': " + strerror(e));
  }
  return guard;
}

}  // namespace loom
