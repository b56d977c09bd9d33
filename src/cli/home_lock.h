// An exclusive per-home lock for the maintenance commands (`loom sweep`, `loom erase`,
// `loom retention run`): a second one on the same home fails at once instead of racing the
// first. flock(2) on a file in the home; released when the process ends, even by a crash.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "loom/util/error.h"

namespace loom::cli {

class HomeLock {
 public:
  // Throws FailedPreconditionError when another process holds `name` on this home.
  HomeLock(const std::filesystem::path& home, const std::string& name) {
    std::string path = (home / (name + ".lock")).string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      throw UnavailableError("cannot open the lock file " + path + "; check the home is writable");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw FailedPreconditionError("another `loom " + name + "` is running on this home (" +
                                    path + " is locked); wait for it to finish, then run again");
    }
  }
  ~HomeLock() { ::close(fd_); }
  HomeLock(const HomeLock&) = delete;
  HomeLock& operator=(const HomeLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace loom::cli
