#include "mcp_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "loom/util/error.h"
#include "util/guarded_child.h"
#include "util/sigpipe_block.h"

namespace loom::providers {
namespace {

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended (wait status " + std::to_string(status) + ")";
}

}  // namespace

McpProcess::McpProcess(std::string server, const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env,
                       const std::string& workingDirectory, bool inheritEnv)
    : server_(std::move(server)) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw UnavailableError("pipe: " + std::string(strerror(errno)));
  if (pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    throw UnavailableError("pipe: " + std::string(strerror(errno)));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    throw UnavailableError("pipe: " + std::string(strerror(errno)));
  }
  int rc = 0;
  std::string why;
  try {
    pid_ = startGuarded(GuardedCommand{argv, workingDirectory, env, inheritEnv}, in[0], out[1],
                        err[1]);
  } catch (const Error& e) {
    rc = -1;
    why = e.what();
  }
  ::close(in[0]), ::close(out[1]), ::close(err[1]);
  in_ = in[1], out_ = out[0], err_ = err[0];
  if (rc != 0) {
    closeFd(in_), closeFd(out_), closeFd(err_);
    pid_ = -1;
    throw UnavailableError("cannot start MCP server '" + server_ + "' (" + why +
                           "); check its command and PATH");
  }
  fcntl(in_, F_SETFL, O_NONBLOCK);
}

McpProcess::~McpProcess() {
  if (pid_ > 0) stop(0);
  closeFd(out_), closeFd(err_);
}

void McpProcess::writeAll(std::string_view data, Deadline deadline) {
  std::lock_guard lock(writeMu_);
  if (in_ < 0 || stopping_.load()) {
    throw UnavailableError("MCP server '" + server_ + "' is stopping; its stdin is closed");
  }
  SigpipeBlock noSigpipe;
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(in_, data.data() + done, data.size() - done);
    if (w > 0) {
      done += static_cast<std::size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) {
        throw DeadlineExceededError("MCP server '" + server_ +
                                    "' did not read its stdin in time (it is stuck or busy)");
      }
      if (stopping_.load()) {
        throw UnavailableError("MCP server '" + server_ + "' is stopping; its stdin is closed");
      }
      pollfd p{in_, POLLOUT, 0};
      poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 50)));
      continue;
    }
    throw UnavailableError("MCP server '" + server_ + "' closed its stdin (" +
                           std::string(strerror(errno)) + "); it has probably exited");
  }
}

std::optional<std::string> McpProcess::exitDescription(int64_t waitMillis) {
  std::lock_guard lock(mu_);
  if (ended_ || pid_ <= 0) return ended_;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(waitMillis);
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      ended_ = describe(status);
      return ended_;
    }
    if (r < 0 && errno != EINTR) {
      ended_ = "ended (" + std::string(strerror(errno)) + ")";
      return ended_;
    }
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void McpProcess::signalGroup(int sig) {
  std::lock_guard lock(mu_);
  if (!ended_ && pid_ > 0) ::kill(-pid_, sig);
}

void McpProcess::stop(int64_t graceMillis) {
  stopping_.store(true);
  {
    std::lock_guard lock(writeMu_);  // a writer notices stopping_ within 50 ms
    closeFd(in_);
  }
  if (pid_ <= 0) return;
  if (exitDescription(graceMillis)) return;
  signalGroup(SIGTERM);
  if (!exitDescription(graceMillis)) signalGroup(SIGKILL);
  exitDescription(60'000);
  // The group leader is gone; members that outlived SIGTERM (a launcher's child) must not.
  ::kill(-pid_, SIGKILL);
}

}  // namespace loom::providers
