#include "util/posix_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "loom/util/error.h"
#include "util/io_error.h"

namespace loom::posix {

void throwIoError(int err, std::string_view op, const std::filesystem::path& path) {
  loom::throwIoError(err, std::string(op) + " '" + path.string() + "'");
}

UniqueFd openOrThrow(const std::filesystem::path& path, int flags, std::string_view op,
                     mode_t mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throwIoError(errno, op, path);
  return UniqueFd(fd);
}

void writeAll(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throwIoError(errno, "write", path);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void pwriteAll(int fd, std::string_view bytes, int64_t offset, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throwIoError(errno, "write", path);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    offset += n;
  }
}

void syncFile(int fd, const std::filesystem::path& path) {
  if (::fsync(fd) != 0) throwIoError(errno, "fsync", path);
}

std::string readAll(int fd, const std::filesystem::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throwIoError(errno, "stat", path);
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  for (;;) {
    if (done == out.size()) out.resize(done + 4096);  // grew since fstat: keep reading
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throwIoError(errno, "read", path);
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

namespace {

std::function<void(const std::filesystem::path&)>& directorySyncObserver() {
  static std::function<void(const std::filesystem::path&)> observer;
  return observer;
}

}  // namespace

void setDirectorySyncObserver(std::function<void(const std::filesystem::path&)> observer) {
  directorySyncObserver() = std::move(observer);
}

void fsyncDirectory(const std::filesystem::path& dir) {
  UniqueFd fd = openOrThrow(dir, O_RDONLY | O_DIRECTORY, "open directory");
  if (::fsync(fd.get()) != 0) throwIoError(errno, "fsync directory", dir);
  if (directorySyncObserver()) directorySyncObserver()(dir);
}

void replaceFileDurably(const std::filesystem::path& path, std::string_view bytes, mode_t mode) {
  std::error_code ec;
  auto kind = std::filesystem::status(path, ec).type();
  if (kind != std::filesystem::file_type::not_found &&
      kind != std::filesystem::file_type::regular) {
    // A device or a pipe (`-o /dev/stdout`): nothing to replace, the bytes go through it.
    UniqueFd fd = openOrThrow(path, O_WRONLY, "open", mode);
    writeAll(fd.get(), bytes, path);
    return;
  }
  const std::filesystem::path folder =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(folder, ec)) {
    throw FailedPreconditionError("cannot write '" + path.string() + "': the folder '" +
                                  folder.string() + "' does not exist; create it first");
  }
  std::filesystem::path temp = path;
  temp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(::time(nullptr));
  try {
    UniqueFd fd = openOrThrow(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, "create", mode);
    writeAll(fd.get(), bytes, temp);
    syncFile(fd.get(), temp);
    if (::rename(temp.c_str(), path.c_str()) != 0) throwIoError(errno, "rename over", path);
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  try {
    fsyncDirectory(folder);  // the file is in place whatever this says
  } catch (const Error&) {
  }
}

struct dirent* readEntry(DIR* dir, const std::filesystem::path& path) {
  errno = 0;
  struct dirent* entry = ::readdir(dir);
  if (entry == nullptr && errno != 0) throwIoError(errno, "read directory", path);
  return entry;
}

bool pathExists(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  throwIoError(errno, "look for", path);
}

bool makeDirectory(const std::filesystem::path& dir) {
  if (::mkdir(dir.c_str(), 0700) == 0) return true;  // subjects' data: owner only
  if (errno == EEXIST) return false;
  throwIoError(errno, "create directory", dir);
}

void lockExclusive(int fd, const std::filesystem::path& path) {
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) throwIoError(errno, "lock", path);
  }
}

int64_t mtimeMillis(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

void modificationTimes(int64_t millis, struct timespec out[2]) {
  out[0].tv_sec = 0;
  out[0].tv_nsec = UTIME_OMIT;
  int64_t seconds = millis / 1000;
  int64_t rest = millis % 1000;
  if (rest < 0) {  // floor division, so times before 1970 round-trip through mtimeMillis
    rest += 1000;
    seconds -= 1;
  }
  out[1].tv_sec = static_cast<time_t>(seconds);
  out[1].tv_nsec = static_cast<long>(rest * 1'000'000);
}

}  // namespace loom::posix
