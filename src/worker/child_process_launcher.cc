#include "worker/child_process_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "loom/util/error.h"
#include "run_outcome.h"
#include "util/this_program.h"
#include "util/unique_fd.h"

extern char** environ;

namespace loom::worker {
namespace {

// Set in a run's child: the worker's pid, so the child dies with the worker.
constexpr const char* kWorkerPidEnv = "LOOM_WORKER_PID";
// "<token>:<execution id>": the lease the worker claimed for the `loom resume` it starts.
constexpr const char* kClaimedLeaseEnv = "LOOM_CLAIMED_LEASE";


}  // namespace

std::optional<workflow::RunResult> ChildProcessLauncher::run(const kernel::Lease& claim,
                                                             const kernel::ExecutionInfo&) {
  const std::string& id = claim.executionId;
  UniqueFd err = scratchFile("loom worker");
  int status = spawnAndWait(claim, err.get());
  {
    std::lock_guard lock(mu_);
    children_.erase(id);
  }
  if (settledOutcome(store_, id)) return std::nullopt;  // the executor reads how it stands
  if (WIFSIGNALED(status)) {
    throw UnavailableError("stopped by signal " + std::to_string(WTERMSIG(status)) +
                           " (resumable)");
  }
  std::string text = readBack(err.get(), 4096);
  throw UnavailableError(text.empty() ? std::string("no message") : text);
}

void ChildProcessLauncher::interrupt(int stage) {
  std::lock_guard lock(mu_);
  killing_ = stage == 1 ? SIGTERM : SIGKILL;
  for (const auto& [id, pid] : children_) {
    if (pid > 0) ::kill(-pid, killing_);
  }
}

int ChildProcessLauncher::spawnAndWait(const kernel::Lease& claim, int errFd) {
  const std::string& id = claim.executionId;
  std::vector<std::string> argv{program_};
  argv.insert(argv.end(), globalArgs_.begin(), globalArgs_.end());
  argv.insert(argv.end(), {"resume", id});
  // The child's stderr says why it did not finish (its stdout is not read: no --json, which
  // would move its error there).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, errFd, 2);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  // A process group of its own: a Ctrl-C at the terminal reaches the worker, which drains,
  // not every run at once.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::string workerPid = std::string(kWorkerPidEnv) + "=" + std::to_string(::getpid());
  std::string claimed =
      std::string(kClaimedLeaseEnv) + "=" + std::to_string(claim.token) + ":" + id;
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(workerPid.data());
  envp.push_back(claimed.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attr, cargv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw UnavailableError(argv[0] + ": " + std::strerror(rc));
  {
    std::lock_guard lock(mu_);
    children_[id] = pid;
    if (killing_ != 0) ::kill(-pid, killing_);  // spawned after the drain signalled the others
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::optional<kernel::ClaimedLease> takeClaimFromWorker() {
  const char* worker = std::getenv(kWorkerPidEnv);
  if (worker == nullptr) return std::nullopt;
  pid_t parent = static_cast<pid_t>(std::strtol(worker, nullptr, 10));
  std::optional<kernel::ClaimedLease> claim;
  if (const char* claimed = std::getenv(kClaimedLeaseEnv)) {
    std::string text(claimed);
    auto colon = text.find(':');
    if (colon != std::string::npos) {
      claim = kernel::ClaimedLease{text.substr(colon + 1),
                                   std::strtoll(text.c_str(), nullptr, 10), parent};
    }
  }
  ::unsetenv(kClaimedLeaseEnv);
  ::unsetenv(kWorkerPidEnv);  // not for the tools this run starts
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);  // the worker died before this line
  return claim;
}

}  // namespace loom::worker
