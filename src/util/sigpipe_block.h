// SigpipeBlock: while alive, a write to a pipe or socket whose reader is gone fails with EPIPE
// in the calling thread instead of killing the process with SIGPIPE. Used around writes to a
// child process's stdin (subprocess tools, MCP servers) and around HTTP requests of the
// OpenAI-compatible model (cpp-httplib's client does not ask for MSG_NOSIGNAL). Affects only the
// calling thread; a SIGPIPE raised inside the scope is consumed unless one was already pending
// before it.
#pragma once

#include <signal.h>

#include <ctime>

namespace loom {

class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    wasPending_ = pending();
  }
  ~SigpipeBlock() {
    if (!wasPending_ && pending()) {
      timespec zero{0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  static bool pending() {
    sigset_t set;
    sigpending(&set);
    return sigismember(&set, SIGPIPE) == 1;
  }
  sigset_t pipe_;
  sigset_t old_;
  bool wasPending_ = false;
};

}  // namespace loom
