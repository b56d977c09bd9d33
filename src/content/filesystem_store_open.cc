// Opening a filesystem content store: its folders, the LAYOUT file, the stripe lock files and
// the removal of stray temp files.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <random>

#include "filesystem_store_impl.h"
#include "loom/util/error.h"
#include "util/private_files.h"

namespace loom::content {
namespace {

constexpr std::string_view kLayoutFile = "LAYOUT";
// A temp file younger than this is never taken for a stray (docs/spec/content-store.md).
constexpr int64_t kStrayTempMinAgeMillis = 60'000;

// The filesystem's clock, which stamps a new file's mtime (not the store's touch clock,
// which tests replace).
int64_t wallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
constexpr std::string_view kLayoutPrefix = "loom filesystem content store, layout ";

void makeDirectories(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) posix::throwIoError(ec.value(), "create directory", dir);
  restrictToOwner(dir);  // blobs are subjects' data: owner only, whatever the umask
}

}  // namespace

FilesystemContentStore::Impl::Impl(std::filesystem::path rootDir,
                                   std::shared_ptr<const Clock> clock)
    : name("filesystem content store '" + rootDir.string() + "'"),
      root(std::move(rootDir)),
      tmpDir(root / "tmp"),
      lockDir(root / "locks"),
      touch(std::move(clock), name) {
  if (root.empty()) {
    throw InvalidArgumentError("filesystem content store needs a root folder, not ''");
  }
  std::random_device random;
  nonce = (static_cast<uint64_t>(random()) << 32) ^ random();
  makeDirectories(root);
  makeDirectories(tmpDir);
  makeDirectories(lockDir);
  checkLayout();
  openLocks();
  removeStrayTemps();
  checkMillisecondTimes();
}

LockStripe& FilesystemContentStore::Impl::stripeOf(std::string_view address) {
  char c = address[0];
  return stripes[static_cast<std::size_t>(c <= '9' ? c - '0' : c - 'a' + 10)];
}

void FilesystemContentStore::Impl::checkLayout() {
  std::filesystem::path path = root / kLayoutFile;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    // A new store: write LAYOUT whole (temp, fsync, link), so no reader sees it half written.
    std::filesystem::path temp;
    posix::UniqueFd out = createTemp("LAYOUT", temp);
    posix::writeAll(out.get(),
                    std::string(kLayoutPrefix) + std::to_string(kFilesystemLayoutVersion) + "\n",
                    temp);
    if (::fdatasync(out.get()) != 0) posix::throwIoError(errno, "fsync", temp);
    int linked = ::link(temp.c_str(), path.c_str());
    int linkErr = errno;
    ::unlink(temp.c_str());
    if (linked != 0 && linkErr != EEXIST) posix::throwIoError(linkErr, "create", path);
    posix::fsyncDirectory(root);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // another process's, if it won the link
  }
  if (fd < 0) posix::throwIoError(errno, "open", path);
  posix::UniqueFd in(fd);
  std::string text = posix::readAll(in.get(), path);
  std::string_view rest = text;
  int version = 0;
  bool ok = rest.substr(0, kLayoutPrefix.size()) == kLayoutPrefix;
  if (ok) {
    rest.remove_prefix(kLayoutPrefix.size());
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), version);
    std::string_view tail(end, static_cast<std::size_t>(rest.data() + rest.size() - end));
    ok = ec == std::errc() && (tail.empty() || tail == "\n");
  }
  if (!ok) {
    throw DataLossError(name + ": " + path.string() + " holds '" + text.substr(0, 80) + "', not '" +
                        std::string(kLayoutPrefix) +
                        "<n>'; restore that file or open the right folder");
  }
  layout = version;
  if (version > kFilesystemLayoutVersion || version < kFilesystemLayoutOldestReadable) {
    throw FailedPreconditionError(
        name + " was written with layout " + std::to_string(version) +
        " but this build reads layouts " + std::to_string(kFilesystemLayoutOldestReadable) +
        " to " + std::to_string(kFilesystemLayoutVersion) +
        (version > kFilesystemLayoutVersion ? "; upgrade Loom to open it" : ""));
  }
}

posix::UniqueFd FilesystemContentStore::Impl::createTemp(std::string_view stem,
                                                         std::filesystem::path& path) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    path = tmpDir / (std::string(stem) + "." + std::to_string(::getpid()) + "." +
                     std::to_string(nonce) + "." + std::to_string(nextTemp++) + ".tmp");
    posix::UniqueFd fd = posix::openOrThrow(path, O_WRONLY | O_CREAT | O_EXCL, "create temp file");
    posix::lockExclusive(fd.get(), path);
    // Another store's open may have removed it between open and flock: then start over.
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) posix::throwIoError(errno, "stat", path);
    if (st.st_nlink > 0) return fd;
  }
  throw UnavailableError(name + ": temp files in " + tmpDir.string() +
                         " keep being removed by stores being opened; retry");
}

void FilesystemContentStore::Impl::checkMillisecondTimes() {
  // Touch times are mtimes: a filesystem that rounds them to seconds could make a blob
  // touched after a cutoff look older than it, and a conditional delete would then take it.
  constexpr int64_t kProbeMillis = 1'234'567'891'234;
  std::filesystem::path path;
  posix::UniqueFd fd = createTemp("mtime-probe", path);
  struct timespec times[2];
  posix::modificationTimes(kProbeMillis, times);
  struct stat st {};
  bool ok = ::futimens(fd.get(), times) == 0 && ::fstat(fd.get(), &st) == 0;
  int err = errno;
  ::unlink(path.c_str());
  if (!ok) posix::throwIoError(err, "set the mtime of", path);
  if (posix::mtimeMillis(st) != kProbeMillis) {
    throw FailedPreconditionError(name + ": the filesystem of " + root.string() +
                                  " does not keep file times to the millisecond, and touch "
                                  "times are file times; put the store on another filesystem");
  }
}

void FilesystemContentStore::Impl::openLocks() {
  for (std::size_t i = 0; i < kLockStripes; ++i) {
    stripes[i].lockPath = lockDir / std::string(1, "0123456789abcdef"[i]);
    stripes[i].lockFd = posix::openOrThrow(stripes[i].lockPath, O_RDWR | O_CREAT, "open lock file");
  }
}

void FilesystemContentStore::Impl::removeStrayTemps() {
  DIR* dir = ::opendir(tmpDir.c_str());
  if (dir == nullptr) posix::throwIoError(errno, "open directory", tmpDir);
  std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
  while (dirent* entry = ::readdir(dir)) {
    std::string_view file = entry->d_name;
    if (file == "." || file == "..") continue;
    std::filesystem::path path = tmpDir / file;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) continue;  // its writer finished meanwhile
      posix::throwIoError(errno, "open stray temp file", path);
    }
    posix::UniqueFd held(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) posix::throwIoError(errno, "stat", path);
    if (!S_ISREG(st.st_mode)) continue;
    // A writer creates its temp file, then flocks it: one created in the last minute may be
    // between the two (another process opening the same new home at once), so it stays.
    if (wallMillis() - posix::mtimeMillis(st) < kStrayTempMinAgeMillis) continue;
    // A live writer keeps its temp file flocked until it is renamed into place.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK || errno == EINTR) continue;
      posix::throwIoError(errno, "lock stray temp file", path);
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      posix::throwIoError(errno, "remove stray temp file", path);
    }
    ++strayRemoved;
  }
}

StripeLock::StripeLock(LockStripe& stripe) : stripe_(stripe), lock_(stripe.mu) {
  posix::lockExclusive(stripe_.lockFd.get(), stripe_.lockPath);
}

StripeLock::~StripeLock() {
  // Closing the store's descriptor would release it too; an unlock error leaves nothing to do.
  ::flock(stripe_.lockFd.get(), LOCK_UN);
}

}  // namespace loom::content
