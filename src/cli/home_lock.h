// An exclusive per-home lock for the maintenance commands (`loom sweep`, `loom erase`,
// `loom retention run`): a second one on the same home fails at once instead of racing the
// first. flock(2) on a file in the home or, on PostgreSQL, an advisory lock of the schema (so
// the commands on every machine exclude each other); released when the process ends, even by
// a crash.
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
  // Throws FailedPreconditionError when another process holds `name` on this home.
  HomeLock(const app::StorageLocation& where, const std::string& name) {
    if (where.onPostgres()) {
      shared_ = std::make_unique<postgres::MaintenanceLock>(where.postgresOptions(), name);
      return;
    }
    std::string path = (where.home / (name + ".lock")).string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      throw UnavailableError("cannot open the lock file " + path + "; check the home is writable");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw FailedPreconditionError("another `loom " + name + "` is running on this home (" + path +
                                    " is locked); wait for it to finish, then run again");
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
  int fd_ = -1;
  std::unique_ptr<postgres::MaintenanceLock> shared_;
};

}  // namespace loom::cli
