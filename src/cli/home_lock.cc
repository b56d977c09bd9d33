#include "home_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "loom/util/error.h"

namespace loom::cli {
namespace {

// The command the holder wrote into the lock file; empty when unreadable or not written yet.
std::string holderOf(int fd) {
  char buf[32];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  for (char c : text) {
    if (!(c == '-' || c == ' ' || (c >= 'a' && c <= 'z'))) return "";
  }
  return text;
}

// Opens the lock file without following a link, and only when it is a plain file with one name:
// its content is overwritten, so it must be no other file of the home (loom.db) or elsewhere.
int openLockFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == ELOOP || errno == EISDIR)) {
    throw FailedPreconditionError(path +
                                  " is a link or a folder, not the lock file Loom keeps "
                                  "there; remove it and run again");
  }
  if (fd < 0) {
    throw UnavailableError("cannot open the lock file " + path + " (" +
                           std::error_code(errno, std::generic_category()).message() +
                           "); check the home is writable");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd);
    throw FailedPreconditionError(path +
                                  " is not the plain file Loom keeps there (a device, or "
                                  "a second name of another file); remove it and run "
                                  "again");
  }
  return fd;
}

// True when `fd` is still the file at `path`: not removed or replaced between open and flock.
bool stillAt(int fd, const std::string& path) {
  struct stat held {
  }, named{};
  return ::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 &&
         held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

[[noreturn]] void refuseHeld(const std::string& command, const std::string& holder,
                            const std::string& what) {
  throw FailedPreconditionError(
      "`loom " + command + "` did not start: " +
      (holder.empty() ? std::string("another maintenance command (`loom sweep`, `loom "
                                    "erase`, `loom retention run` or `loom migrate-home`)")
                      : "`loom " + holder + "`") +
      " is running on this home (" + what + " is locked); wait for it to finish, then run again");
}

// The command named in <home>/maintenance.lock, read without opening it for writing.
std::string namedHolder(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  std::string holder = holderOf(fd);
  ::close(fd);
  return holder;
}

}  // namespace

HomeLock::HomeLock(const app::StorageLocation& where, const std::string& command) {
  if (where.onPostgres()) {
    shared_ = std::make_unique<postgres::MaintenanceLock>(where.postgresOptions(), command);
    return;
  }
  std::string path = (where.home / "maintenance.lock").string();
  folder_ = UniqueFd(::open(where.home.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!folder_.valid()) {
    throw UnavailableError("cannot open the home folder " + where.home.string() + " (" +
                           std::error_code(errno, std::generic_category()).message() + ")");
  }
  if (::flock(folder_.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      throw UnavailableError("cannot lock the home folder " + where.home.string() + " (" +
                             std::error_code(errno, std::generic_category()).message() +
                             "); on NFS, run the maintenance commands where the home's disk is");
    }
    refuseHeld(command, namedHolder(path), "the home folder " + where.home.string());
  }
  for (int attempt = 0;; ++attempt) {
    fd_ = openLockFile(path);
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      std::string holder = holderOf(fd_);
      ::close(fd_);
      fd_ = -1;
      refuseHeld(command, holder, path);
    }
    if (stillAt(fd_, path)) break;
    ::close(fd_);  // removed or replaced meanwhile: the lock is the file now at the path
    fd_ = -1;
    if (attempt == 3) {
      throw UnavailableError(path + " keeps being removed or replaced; run again");
    }
  }
  // Names the holder for the next one refused; the lock is held whether or not this lands.
  if (::ftruncate(fd_, 0) == 0) {
    ssize_t ignored = ::pwrite(fd_, command.data(), command.size(), 0);
    (void)ignored;
  }
}

HomeLock::~HomeLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace loom::cli
