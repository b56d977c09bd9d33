// Loom's one owning file descriptor (UniqueFd: closed on destruction, movable) and pipe
// (openPipe: both ends close-on-exec), for the content store's files, subprocess tools and MCP
// servers. Thread-safety: a UniqueFd is used by one thread at a time.
#pragma once

namespace loom {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the descriptor (if any); valid() is false afterwards.
  void reset();

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read;  // what is written to `write` comes out here
  UniqueFd write;
};

// pipe2(O_CLOEXEC); throws UnavailableError naming errno when the process is out of
// descriptors.
Pipe openPipe();

}  // namespace loom
