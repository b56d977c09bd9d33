#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "guarded_child.h"
#include "loom/util/error.h"
#include "util/sigpipe_block.h"
#include "util/unique_fd.h"

namespace loom {
namespace {

void sleepMillis(long ms) {
  timespec t{0, ms * 1'000'000L};
  nanosleep(&t, nullptr);
}

// Appends `bytes` to `err`, keeping only the last `cap` bytes.
void keepTail(std::string& err, const char* bytes, std::size_t n, std::size_t cap,
              bool& truncated) {
  err.append(bytes, n);
  if (err.size() > 2 * cap) {
    err.erase(0, err.size() - cap);
    truncated = true;
  }
}

class Run {
 public:
  Run(pid_t guard, Pipe& in, Pipe& out, Pipe& err, const std::string& input,
      const SubprocessOptions& options)
      : guard_(guard), in_(in), out_(out), err_(err), input_(input), options_(options) {}

  SubprocessResult wait() {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.timeoutMillis);
    for (;;) {
      if (guardExited()) break;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0 || result_.outputTooLarge) {
        result_.timedOut = left <= 0 && !result_.outputTooLarge;
        break;
      }
      pump(static_cast<int>(std::min<int64_t>(left, 50)));
    }
    if (!result_.timedOut && !result_.outputTooLarge) drain();  // what it wrote before it ended
    // Kill the group before reaping the guard (its pid, the group's id, stays ours until
    // then): the tool on a timeout, a background child it left holding stdout open.
    kill(-guard_, SIGKILL);
    reap();
    if (result_.err.size() > options_.maxStderrBytes) {
      result_.err.erase(0, result_.err.size() - options_.maxStderrBytes);
      result_.errTruncated = true;
    }
    return std::move(result_);
  }

 private:
  // True once the guard (and so the tool) has ended; it stays a zombie until reap().
  bool guardExited() {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(guard_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      return errno != EINTR;
    }
    return info.si_pid == guard_;
  }

  void reap() {
    int status = 0;
    while (waitpid(guard_, &status, 0) < 0) {
      if (errno != EINTR) return;
    }
    if (WIFEXITED(status)) result_.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result_.signal = WTERMSIG(status);
  }

  void read(int which) {
    Pipe& p = which == 0 ? out_ : err_;
    char buf[65536];
    ssize_t r = ::read(p.read.get(), buf, sizeof buf);
    if (r > 0) {
      std::size_t n = static_cast<std::size_t>(r);
      if (which == 0) {
        result_.out.append(buf, n);
        if (result_.out.size() > options_.maxOutputBytes) result_.outputTooLarge = true;
      } else {
        keepTail(result_.err, buf, n, options_.maxStderrBytes, result_.errTruncated);
      }
    } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
      p.read.reset();
    }
  }

  void pump(int timeoutMs) {
    pollfd fds[3] = {
        {out_.read.get(), POLLIN, 0}, {err_.read.get(), POLLIN, 0}, {in_.write.get(), POLLOUT, 0}};
    if (out_.read.get() < 0 && err_.read.get() < 0 && in_.write.get() < 0) {
      sleepMillis(timeoutMs < 5 ? timeoutMs : 5);  // only the exit is left to wait for
      return;
    }
    int n = poll(fds, 3, timeoutMs);
    if (n <= 0) return;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) read(i);
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = write(in_.write.get(), input_.data() + written_, input_.size() - written_);
      if (w > 0) written_ += static_cast<std::size_t>(w);
      if (w < 0 && errno != EAGAIN) in_.write.reset();  // the child closed stdin: stop writing
      if (written_ == input_.size()) in_.write.reset();
    }
  }

  // Reads what is left without waiting for an EOF a background child may never send.
  void drain() {
    for (Pipe* p : {&out_, &err_}) {
      if (p->read.get() >= 0) fcntl(p->read.get(), F_SETFL, O_NONBLOCK);
    }
    for (int i = 0; i < 2; ++i) {
      Pipe& p = i == 0 ? out_ : err_;
      while (p.read.get() >= 0 && !(i == 0 && result_.outputTooLarge)) {
        std::size_t before = i == 0 ? result_.out.size() : result_.err.size();
        read(i);
        std::size_t after = i == 0 ? result_.out.size() : result_.err.size();
        if (p.read.get() >= 0 && after == before && errno == EAGAIN) break;
      }
    }
    in_.write.reset();
  }

  pid_t guard_;
  Pipe& in_;
  Pipe& out_;
  Pipe& err_;
  const std::string& input_;
  const SubprocessOptions& options_;
  SubprocessResult result_;
  std::size_t written_ = 0;
};

}  // namespace

SubprocessResult runSubprocess(const std::vector<std::string>& argv, const std::string& input,
                               const SubprocessOptions& options) {
  if (argv.empty()) throw InvalidArgumentError("a subprocess needs a command");
  SigpipeBlock noSigpipe;  // a child that exits before reading its stdin must not kill us
  Pipe in = openPipe(), out = openPipe(), err = openPipe();
  pid_t guard = startGuarded(
      GuardedCommand{argv, options.workingDirectory, options.extraEnv, options.inheritEnv},
      in.read.get(), out.write.get(), err.write.get());
  in.read.reset();
  out.write.reset();
  err.write.reset();
  fcntl(in.write.get(), F_SETFL, O_NONBLOCK);
  if (input.empty()) in.write.reset();
  return Run(guard, in, out, err, input, options).wait();
}

}  // namespace loom
