#include "guarded_child.h"

#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "loom/util/error.h"
#include "util/child_environment.h"
#include "util/guard_process.h"
#include "util/unique_fd.h"

namespace loom {
namespace {

// What the guard and the command need, prepared before the guard starts (in a fork of loom,
// only async-signal-safe calls are allowed).
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

// A guard program Loom will run: a regular, executable file, owned by root or by this user and
// writable by no one else (so no other user can have put it there).
bool trustedProgram(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) return false;
  return (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 && ::access(path.c_str(), X_OK) == 0;
}

// Where loom-guard is, looked for once, in absolute places only: at <prefix>/libexec/loom as
// `cmake --install` lays it out, whatever the prefix, seen from the library or program holding
// this code and from the running program; in this build tree, for programs of this build
// only; where the configured prefix has it. Null: fork the guard instead.
const char* guardProgram() {
  static const std::string path = [] {
    std::vector<std::filesystem::path> candidates;
    Dl_info self{};
    if (::dladdr(reinterpret_cast<void*>(&guardProgram), &self) != 0 && self.dli_fname != nullptr) {
      auto folder = std::filesystem::path(self.dli_fname).parent_path();
      if (folder.is_absolute()) {  // never a place relative to the working folder
        candidates.push_back(folder / LOOM_GUARD_FROM_LIBDIR);
        candidates.push_back(folder / LOOM_GUARD_FROM_BINDIR);
      }
    }
    std::error_code ec;
    std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (!ec) {
      candidates.push_back(std::filesystem::path(exe).parent_path() / LOOM_GUARD_FROM_BINDIR);
      if (exe.starts_with(LOOM_BUILD_DIR "/")) candidates.push_back(LOOM_GUARD_BUILD_PATH);
    }
    candidates.push_back(LOOM_GUARD_INSTALL_PATH);
    for (const auto& c : candidates) {
      if (trustedProgram(c)) return c.string();  // as checked: no textual `..` folding
    }
    return std::string();
  }();
  return path.empty() ? nullptr : path.c_str();
}

// Starts loom-guard with posix_spawn (a vfork and an exec): its cost does not grow with loom's
// size, where a fork copies loom's page tables twice (for the guard, then for the command) and
// made a long run's turns dearer with every turn. The stdio and report ends go to 0..3 through
// descriptors above all four (so none overwrites another), every other one is closed, and the
// guard leads a new process group from the start. Returns an errno when it cannot, a setup
// step included (a descriptor past the limit): the caller then forks the guard.
int spawnGuard(const char* guard, const ExecPlan& plan, pid_t loom, const int (&fds)[4],
               pid_t& pid) {
  std::string loomPid = std::to_string(loom);
  std::vector<char*> argv{const_cast<char*>(guard), const_cast<char*>(kGuardProtocol),
                          loomPid.data(), const_cast<char*>(plan.workingDirectory.c_str()),
                          const_cast<char*>(plan.program.c_str())};
  argv.insert(argv.end(), plan.argvp.begin(), plan.argvp.end());  // ends with its null
  int high = *std::max_element(std::begin(fds), std::end(fds)) + 1;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  if (int rc = posix_spawn_file_actions_init(&actions); rc != 0) return rc;
  if (int rc = posix_spawnattr_init(&attr); rc != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return rc;
  }
  int rc = 0;
  for (int i = 0; i < 4 && rc == 0; ++i) {
    rc = posix_spawn_file_actions_adddup2(&actions, fds[i], high + i);
  }
  for (int i = 0; i < 4 && rc == 0; ++i) {
    rc = posix_spawn_file_actions_adddup2(&actions, high + i, i);
  }
  if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, kGuardReportFd + 1);
  if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  if (rc == 0) rc = posix_spawnattr_setpgroup(&attr, 0);
  if (rc == 0) rc = ::posix_spawn(&pid, guard, &actions, &attr, argv.data(), plan.envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  return rc;
}

// The guard as a fork of loom, when no loom-guard program is there.
pid_t forkGuard(const ExecPlan& plan, pid_t loom, const int (&fds)[4]) {
  GuardPlan guardPlan{plan.program.c_str(), plan.argvp.data(), plan.envp.data(),
                      plan.workingDirectory.c_str()};
  pid_t guard = fork();
  if (guard == 0) {  // async-signal-safe calls only from here
    keepOnlyStdio(fds[0], fds[1], fds[2], fds[3]);
    runGuard(guardPlan, loom);
  }
  if (guard > 0) setpgid(guard, guard);  // so a kill of the group cannot race the guard's call
  return guard;
}

// Starts the guard: spawned when the program is there, forked otherwise. -1 and errno set
// when neither can start.
pid_t startGuard(const ExecPlan& plan, const int (&fds)[4], GuardStart how) {
  pid_t loom = getpid();
  const char* guard = how == GuardStart::kProgramIfThere ? guardProgram() : nullptr;
  if (guard != nullptr) {
    pid_t pid = -1;
    if (spawnGuard(guard, plan, loom, fds, pid) == 0) return pid;
  }
  return forkGuard(plan, loom, fds);
}

// Starts the guard and waits until the command has exec'd. Returns the guard's pid and 0, or
// (the guard reaped) the errno the guard or the command reported.
std::pair<pid_t, int> tryStart(const ExecPlan& plan, int in, int out, int err, GuardStart how) {
  Pipe report = openPipe();
  const int fds[4] = {in, out, err, report.write.get()};
  pid_t guard = startGuard(plan, fds, how);
  if (guard < 0) {
    int e = errno;
    throw UnavailableError("cannot start '" + plan.argv[0] + "': fork: " + strerror(e));
  }
  report.write.reset();
  int e = 0;
  ssize_t n;
  while ((n = read(report.read.get(), &e, sizeof e)) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof e)) return {guard, 0};
  kill(-guard, SIGKILL);
  while (waitpid(guard, nullptr, 0) < 0 && errno == EINTR) {
  }
  return {guard, e};
}

}  // namespace

pid_t startGuarded(const GuardedCommand& command, int in, int out, int err, GuardStart how) {
  if (command.argv.empty()) throw InvalidArgumentError("a child process needs a command");
  ExecPlan plan = planOf(command);
  auto [guard, e] = tryStart(plan, in, out, err, how);
  if (e == kGuardRefused) {  // a loom-guard of another build: fork the guard instead
    std::tie(guard, e) = tryStart(plan, in, out, err, GuardStart::kFork);
  }
  if (e != 0) throw UnavailableError("cannot start '" + plan.argv[0] + "': " + strerror(e));
  return guard;
}

}  // namespace loom
