#include "util/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "loom/util/error.h"

namespace loom {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Pipe openPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw UnavailableError(std::string("cannot make a pipe: ") + std::strerror(errno) +
                           "; close some files or raise the descriptor limit (ulimit -n)");
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace loom
