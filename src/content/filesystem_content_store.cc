#include "loom/content/filesystem_content_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <unordered_map>

#include "filesystem_store_impl.h"
#include "loom/util/error.h"

namespace loom::content {
namespace {

// Temp files open at once in putMany (each holds a descriptor until it is renamed).
constexpr std::size_t kMaxOpenTemps = 256;

bool isLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool isHexPair(std::string_view name) {
  return name.size() == 2 && isLowerHex(name[0]) && isLowerHex(name[1]);
}

// A temp file holding one blob's bytes; removed on destruction unless it was placed.
struct TempBlob {
  std::string_view address;
  std::string_view bytes;
  std::filesystem::path path;
  posix::UniqueFd fd;
  bool placed = false;
  ~TempBlob() {
    // Best effort: a temp file left behind is removed when the store is next opened.
    if (fd.valid() && !placed) ::unlink(path.c_str());
  }
};

// Creates `dir` when missing; then its parent joins `toSync`, the folders whose entries must
// be made durable before the put returns.
void ensureDirectory(const std::filesystem::path& dir, std::set<std::filesystem::path>& toSync) {
  if (posix::makeDirectory(dir)) toSync.insert(dir.parent_path());
}

// After an operation on blob file `path` failed with ENOENT or ENOTDIR: true when the blob is
// truly absent, false when it appeared since (the caller tries again). Throws when something
// stands in its way, so "cannot reach" never reads as "not there": a symbolic link to a file
// that is gone (a disk not mounted), or a file where one of the store's folders should be.
bool confirmAbsent(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISLNK(st.st_mode) || ::stat(path.c_str(), &st) == 0) return false;  // put meanwhile
    throw UnavailableError("blob file " + path.string() +
                           " is a symbolic link to a file that is not there (a disk not "
                           "mounted?): mount it, or restore the blob there from a backup");
  }
  if (errno == ENOENT) return true;
  if (errno == ENOTDIR) {
    throw DataLossError("a folder on the way to blob file " + path.string() +
                        " is a file: the content store's layout is damaged; move that file out "
                        "of the store (restore the folder from a backup if it held blobs)");
  }
  posix::throwIoError(errno, "stat blob", path);
}

// Deleting a blob unlinks its file; through a symbolic link that would unlink the link and
// leave the bytes where it points (an erasure reporting a blob deleted that is not), so a
// delete refuses a link, naming it.
void requireNotALink(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return;
  std::error_code ec;
  std::filesystem::path target = std::filesystem::read_symlink(path, ec);
  throw FailedPreconditionError(
      "blob file " + path.string() + " is a symbolic link" +
      (ec ? std::string() : " to " + target.string()) +
      ", and deleting it would leave the blob's bytes there: move the file back in place of "
      "the link, then run the sweep or the erasure again");
}

[[noreturn]] void throwNotAFile(const std::filesystem::path& path) {
  throw DataLossError("blob path " + path.string() +
                      " is not a regular file (a folder or a device): move it out of the "
                      "content store, and restore the blob there from a backup");
}

// Reads a blob file: nullopt when absent.
std::optional<std::string> readBlob(const std::filesystem::path& path) {
  int fd = -1;
  while ((fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC)) < 0) {
    if (errno != ENOENT && errno != ENOTDIR) posix::throwIoError(errno, "open blob", path);
    if (confirmAbsent(path)) return std::nullopt;
  }
  posix::UniqueFd held(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) posix::throwIoError(errno, "stat blob", path);
  if (!S_ISREG(st.st_mode)) throwNotAFile(path);
  return posix::readAll(fd, path);
}

// stat(2) of a blob file (through a symbolic link): false when absent.
bool statBlob(const std::filesystem::path& path, struct stat& st) {
  while (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) posix::throwIoError(errno, "stat blob", path);
    if (confirmAbsent(path)) return false;
  }
  if (!S_ISREG(st.st_mode)) throwNotAFile(path);
  return true;
}

using DirPtr = std::unique_ptr<DIR, int (*)(DIR*)>;

// Opens a directory of the shard tree; a null pointer when it vanished. One that is not a
// directory is damage, not an empty shard.
DirPtr openShard(const std::filesystem::path& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr && errno == ENOTDIR) {
    throw DataLossError("content store folder " + path.string() +
                        " is a file: the store's layout is damaged; move that file out of the "
                        "store (restore the folder from a backup if it held blobs)");
  }
  if (dir == nullptr && errno != ENOENT) posix::throwIoError(errno, "open directory", path);
  return DirPtr(dir, ::closedir);
}

}  // namespace

FilesystemContentStore::FilesystemContentStore(std::filesystem::path root,
                                               std::shared_ptr<const Clock> clock)
    : impl_(std::make_unique<Impl>(std::move(root), std::move(clock))) {}

FilesystemContentStore::~FilesystemContentStore() = default;

ContentCapabilities FilesystemContentStore::capabilities() const {
  return {.remove = true,
          .deleteIfUntouchedSince = true,
          .touchClock = true,
          .enumerate = true,
          .sealsContent = false};
}

std::string FilesystemContentStore::put(std::string_view bytes, const std::optional<std::string>&) {
  std::string_view one[1] = {bytes};
  return std::move(putMany(one).front());
}

std::vector<std::string> FilesystemContentStore::putMany(std::span<const std::string_view> batch) {
  Impl& s = *impl_;
  std::vector<std::string> addresses;
  addresses.reserve(batch.size());
  std::unordered_map<std::string_view, std::string_view> unique;  // address -> bytes
  for (std::string_view bytes : batch) addresses.push_back(sha256Hex(bytes));
  for (std::size_t i = 0; i < batch.size(); ++i) unique.emplace(addresses[i], batch[i]);

  // A blob already stored intact is only touched (under its stripe lock, so a conditional
  // delete sees either the old time and deletes before, or the new time and spares it).
  std::vector<std::pair<std::string_view, std::string_view>> missing;
  for (const auto& [address, bytes] : unique) {
    std::filesystem::path path = s.blobPath(address);
    std::optional<std::string> stored = readBlob(path);
    if (stored && *stored == bytes) {
      StripeLock lock(s.stripeOf(address));
      int64_t now = s.touch.now();
      struct stat st {};
      if (statBlob(path, st)) {
        if (posix::mtimeMillis(st) < now) {
          struct timespec times[2];
          posix::modificationTimes(now, times);
          if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) {
            posix::throwIoError(errno, "touch blob", path);
          }
        }
        continue;
      }
    }
    missing.emplace_back(address, bytes);  // absent, deleted meanwhile, or not intact
  }

  for (std::size_t from = 0; from < missing.size(); from += kMaxOpenTemps) {
    std::size_t to = std::min(missing.size(), from + kMaxOpenTemps);
    std::vector<std::unique_ptr<TempBlob>> temps;
    for (std::size_t i = from; i < to; ++i) {
      auto temp = std::make_unique<TempBlob>();
      temp->address = missing[i].first;
      temp->bytes = missing[i].second;
      temp->fd = s.createTemp(temp->address, temp->path);
      posix::writeAll(temp->fd.get(), temp->bytes, temp->path);
#ifdef __linux__
      // Start writeback now so the fdatasyncs below overlap on the device.
      if (to - from > 1) ::sync_file_range(temp->fd.get(), 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
      temps.push_back(std::move(temp));
    }
    for (auto& temp : temps) {
      if (::fdatasync(temp->fd.get()) != 0) posix::throwIoError(errno, "fsync", temp->path);
    }
    // Every temp file is durable before any rename, so a crash never shows a partial blob.
    // Folder fsyncs come last, one per folder touched (new folders' parents included).
    std::set<std::filesystem::path> dirs;
    for (auto& temp : temps) {
      std::filesystem::path shard = s.shardDir(temp->address);
      if (s.layout == 1) ensureDirectory(shard.parent_path(), dirs);
      ensureDirectory(shard, dirs);
      std::filesystem::path path = shard / temp->address;
      StripeLock lock(s.stripeOf(temp->address));
      // Renaming over a concurrent identical put's file is harmless (same bytes) and repairs
      // a copy that no longer matches; the touch never moves back.
      int64_t touched = s.touch.now();
      struct stat st {};
      if (statBlob(path, st)) touched = std::max(touched, posix::mtimeMillis(st));
      struct timespec times[2];
      posix::modificationTimes(touched, times);
      if (::futimens(temp->fd.get(), times) != 0) {
        posix::throwIoError(errno, "set mtime of", temp->path);
      }
      if (::rename(temp->path.c_str(), path.c_str()) != 0) {
        posix::throwIoError(errno, "rename temp file to", path);
      }
      temp->placed = true;
      dirs.insert(std::move(shard));
    }
    for (const auto& dir : dirs) posix::fsyncDirectory(dir);
  }
  return addresses;
}

std::optional<std::string> FilesystemContentStore::get(std::string_view address,
                                                       const std::optional<std::string>&) const {
  detail::requireAddress(address, impl_->name);
  std::filesystem::path path = impl_->blobPath(address);
  std::optional<std::string> bytes = readBlob(path);
  if (bytes) detail::verifyBytes(*bytes, address, impl_->name + " (file " + path.string() + ")");
  return bytes;
}

bool FilesystemContentStore::has(std::string_view address) const {
  detail::requireAddress(address, impl_->name);
  struct stat st {};
  return statBlob(impl_->blobPath(address), st);
}

bool FilesystemContentStore::remove(std::string_view address) {
  detail::requireAddress(address, impl_->name);
  std::filesystem::path path = impl_->blobPath(address);
  StripeLock lock(impl_->stripeOf(address));
  requireNotALink(path);
  if (::unlink(path.c_str()) == 0) {
    posix::fsyncDirectory(path.parent_path());  // durable before it is reported
    return true;
  }
  if (errno == ENOENT || errno == ENOTDIR) return false;
  posix::throwIoError(errno, "remove blob", path);
}

bool FilesystemContentStore::deleteIfUntouchedSince(std::string_view address,
                                                    int64_t cutoffMillis) {
  detail::requireAddress(address, impl_->name);
  std::filesystem::path path = impl_->blobPath(address);
  // Check and unlink under the stripe lock: a put touches or renames under it too.
  StripeLock lock(impl_->stripeOf(address));
  struct stat st {};
  if (!statBlob(path, st) || posix::mtimeMillis(st) >= cutoffMillis) return false;
  requireNotALink(path);
  if (::unlink(path.c_str()) == 0) {
    // Durable before it is reported: erasure journals ERASURE_CONTENT_DELETED and the sweep
    // counts it, so a power loss must not bring the blob back.
    posix::fsyncDirectory(path.parent_path());
    return true;
  }
  if (errno == ENOENT) return false;
  posix::throwIoError(errno, "remove blob", path);
}

int64_t FilesystemContentStore::touchClock() const { return impl_->touch.now(); }

namespace {

// Visits the blob files of one shard folder whose names are addresses with `prefix`.
void visitShard(const std::filesystem::path& shard, std::string_view prefix,
                const std::function<void(const BlobInfo&)>& visit) {
  DirPtr dir = openShard(shard);
  if (!dir) return;
  while (dirent* entry = posix::readEntry(dir.get(), shard)) {
    std::string_view file = entry->d_name;
    if (!isValidAddress(file) || file.substr(0, prefix.size()) != prefix) continue;
    struct stat st {};
    if (!statBlob(shard / file, st)) continue;  // deleted since readdir
    visit(BlobInfo{std::string(file), static_cast<int64_t>(st.st_size), posix::mtimeMillis(st)});
  }
}

}  // namespace

void FilesystemContentStore::forEachBlob(const std::function<void(const BlobInfo&)>& visit) const {
  // Streams the shard tree; no lock is held while `visit` runs.
  DirPtr top = openShard(impl_->root);
  if (!top) posix::throwIoError(ENOENT, "open directory", impl_->root);
  while (dirent* first = posix::readEntry(top.get(), impl_->root)) {
    std::string aa = first->d_name;
    if (!isHexPair(aa)) continue;
    std::filesystem::path firstPath = impl_->root / aa;
    if (impl_->layout != 1) {
      visitShard(firstPath, aa, visit);
      continue;
    }
    DirPtr level1 = openShard(firstPath);
    if (!level1) continue;
    while (dirent* second = posix::readEntry(level1.get(), firstPath)) {
      std::string_view bb = second->d_name;
      if (isHexPair(bb)) visitShard(firstPath / bb, aa + std::string(bb), visit);
    }
  }
}

std::optional<BlobInfo> FilesystemContentStore::stat(std::string_view address) const {
  detail::requireAddress(address, impl_->name);
  struct stat st {};
  if (!statBlob(impl_->blobPath(address), st)) return std::nullopt;
  return BlobInfo{std::string(address), static_cast<int64_t>(st.st_size), posix::mtimeMillis(st)};
}

std::filesystem::path FilesystemContentStore::blobPath(std::string_view address) const {
  detail::requireAddress(address, impl_->name);
  return impl_->blobPath(address);
}

const std::filesystem::path& FilesystemContentStore::root() const { return impl_->root; }

int64_t FilesystemContentStore::strayTempFilesRemoved() const { return impl_->strayRemoved; }

}  // namespace loom::content
