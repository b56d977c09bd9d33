// The home's maintenance lock, one for `loom sweep`, `loom erase`, `loom retention run` and
// `loom migrate-home`: while one of them runs, another fails at once instead of racing it (a
// retention that removes a live log while a sweep reads the logs, an erasure's deletes beside a
// sweep's). flock(2) of the home folder itself, which no one can remove from under the holder
// while it holds files (a removed maintenance.lock would free a lock on that file), and then
// of <home>/maintenance.lock, which names the holding command (and excludes older builds); or,
// on PostgreSQL, an advisory lock of the schema (so the commands on every machine exclude each
// other). Released when the process ends, even by a crash. flock(2) of a folder on NFS is not
// seen by other machines: run one home's maintenance from one machine (docs/operations.md).
#pragma once

#include <memory>
#include <string>

#include "app/storage_location.h"
#include "loom/postgres/postgres_admin.h"
#include "util/unique_fd.h"

namespace loom::cli {

class HomeLock {
 public:
  // `command` ("sweep", "erase", ...) names the holder. Throws FailedPreconditionError when
  // another process holds the lock, or when maintenance.lock is not a plain file of its own (a
  // link, a folder, a second name of another file): Loom writes the holder's name into it.
  HomeLock(const app::StorageLocation& where, const std::string& command);
  ~HomeLock();
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
  UniqueFd folder_;  // the home folder, flocked
  std::unique_ptr<postgres::MaintenanceLock> shared_;
};

}  // namespace loom::cli
