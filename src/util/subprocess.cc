#include "loom/util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "loom/util/error.h"
#include "loom/util/child_environment.h"
#include "loom/util/sigpipe_block.h"

namespace loom {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0) throw UnavailableError(std::string("pipe: ") + strerror(errno));
  }
  ~Pipe() { closeBoth(); }
  void close(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  void closeBoth() {
    close(0);
    close(1);
  }
};


pid_t spawn(const std::vector<std::string>& argv, const SubprocessOptions& options, Pipe& in,
            Pipe& out, Pipe& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  if (!options.workingDirectory.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, options.workingDirectory.c_str());
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto env = childEnvironment(ChildEnvironment{options.inheritEnv, options.extraEnv});
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw UnavailableError("cannot start '" + argv[0] + "': " + strerror(rc));
  }
  return pid;
}

}  // namespace

SubprocessResult runSubprocess(const std::vector<std::string>& argv, const std::string& input,
                               const SubprocessOptions& options) {
  if (argv.empty()) throw InvalidArgumentError("a subprocess needs a command");
  SigpipeBlock noSigpipe;  // a child that exits before reading its stdin must not kill us
  Pipe in, out, err;
  pid_t pid = spawn(argv, options, in, out, err);
  in.close(0);
  out.close(1);
  err.close(1);
  fcntl(in.fd[1], F_SETFL, O_NONBLOCK);
  SubprocessResult result;
  std::size_t written = 0;
  if (input.empty()) in.close(1);
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options.timeoutMillis);
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0 || result.out.size() > options.maxOutputBytes) {
      result.timedOut = left <= 0;
      kill(pid, SIGKILL);
      break;
    }
    pollfd fds[3] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}, {in.fd[1], POLLOUT, 0}};
    int n = poll(fds, 3, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t r = read(fds[i].fd, buf, sizeof buf);
      if (r > 0)
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(r));
      else if (r == 0 || errno != EAGAIN)
        (i == 0 ? out : err).close(0);
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = write(in.fd[1], input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if (w < 0 && errno != EAGAIN) in.close(1);  // the child closed stdin: stop writing
      if (written == input.size()) in.close(1);
    }
  }
  in.close(1);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace loom
