// The home's maintenance lock, one for `loom sweep`, `loom erase`, `loom retention run` and
// `loom migrate-home`: while one of them runs, another fails at once instead of racing it (a
// retention that removes a live log while a sweep reads the logs, an erasure's deletes beside a
// sweep's). flock(2) of <home>/maintenance.lock, which names the holding command, or, on
// PostgreSQL, an advisory lock of the schema (so the commands on every machine exclude each
// other); released when the process ends, even by a crash.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "app/storage_location.h"
#include "loom/postgres/postgres_admin.h"
#include "loom/util/error.h"

namespace loom::cli {

class HomeLock {
 public:
  // `command` ("sweep", "erase", ...) names the holder. Throws FailedPreconditionError when
  // another process holds the lock.
  HomeLock(const app::StorageLocation& where, const std::string& command) {
    if (where.onPostgres()) {
      shared_ = std::make_unique<postgres::MaintenanceLock>(where.postgresOptions(), command);
      return;
    }
    std::string path = (where.home / "maintenance.lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      throw UnavailableError("cannot open the lock file " + path + "; check the home is writable");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      std::string holder = holderOf(fd_);
      ::close(fd_);
      throw FailedPreconditionError(
          "`loom " + command + "` did not start: " +
          (holder.empty() ? std::string("another maintenance command (`loom sweep`, `loom "
                                        "erase`, `loom retention run` or `loom migrate-home`)")
                          : "`loom " + holder + "`") +
          " is running on this home (" + path +
          " is locked); wait for it to finish, then run again");
    }
    // Names the holder for the next one refused; the lock is held whether or not this lands.
    if (::ftruncate(fd_, 0) == 0) {
      ssize_t ignored = ::pwrite(fd_, command.data(), command.size(), 0);
      (void)ignored;
    }
  }
  ~HomeLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Throws UnavailableError when the lock was lost: on PostgreSQL its connection can end (a
  // server restart, a network cut) and the server then releases it. A flock lasts as long as
  // the process.
  void check() const {
    if (shared_) shared_->check();
  }
  HomeLock(const HomeLock&) = delete;
  HomeLock& operator=(const HomeLock&) = delete;

 private:
  // The command the holder wrote into the lock file; empty when unreadable or not written yet.
  static std::string holderOf(int fd) {
    char buf[32];
    ssize_t n = ::pread(fd, buf, sizeof buf, 0);
    std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    for (char c : text) {
      if (!(c == '-' || c == ' ' || (c >= 'a' && c <= 'z'))) return "";
    }
    return text;
  }

  int fd_ = -1;
  std::unique_ptr<postgres::MaintenanceLock> shared_;
};

}  // namespace loom::cli
