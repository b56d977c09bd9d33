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
  Pipe in = openPipe(), out = openPipe(), err = openPipe();
  int rc = 0;
  std::string why;
  try {
    pid_ = startGuarded(GuardedCommand{argv, workingDirectory, env, inheritEnv}, in.read.get(),
                        out.write.get(), err.write.get());
  } catch (const Error& e) {
    rc = -1;
    why = e.what();
  }
  in_ = std::move(in.write), out_ = std::move(out.read), err_ = std::move(err.read);
  if (rc != 0) {
    in_.reset(), out_.reset(), err_.reset();
    pid_ = -1;
    throw UnavailableError("cannot start MCP server '" + server_ + "' (" + why +
                           "); check its command and PATH");
  }
  fcntl(in_.get(), F_SETFL, O_NONBLOCK);
}

McpProcess::~McpProcess() {
  if (pid_ > 0) stop(0);
}

void McpProcess::writeAll(std::string_view data, Deadline deadline) {
  std::lock_guard lock(writeMu_);
  if (!in_.valid() || stopping_.load()) {
    throw UnavailableError("MCP server '" + server_ + "' is stopping; its stdin is closed");
  }
  SigpipeBlock noSigpipe;
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(in_.get(), data.data() + done, data.size() - done);
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
      pollfd p{in_.get(), POLLOUT, 0};
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
    in_.reset();
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
