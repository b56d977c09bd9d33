// folderArchiveStore: archive segments as files of one folder (<home>/archive). A writer stages
// a dot-named temp file in the same folder; publish renames it to its name without replacing
// anything (renameat2 RENAME_NOREPLACE) and fsyncs the folder.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "loom/sweep/archive_store.h"
#include "loom/util/error.h"
#include "util/io_error.h"
#include "util/posix_file.h"
#include "util/unique_fd.h"

namespace loom::sweep {

namespace fs = std::filesystem;

bool isSegmentName(std::string_view name) {
  auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  };
  if (name.size() > 200 || !name.ends_with(kSegmentExtension)) return false;
  std::string_view stem = name.substr(0, name.size() - kSegmentExtension.size());
  return !stem.empty() && stem[0] != '-' && stem[0] != '_' &&
         std::all_of(stem.begin(), stem.end(), plain);
}

void requireSegmentName(std::string_view name) {
  if (!isSegmentName(name)) {
    throw InvalidArgumentError("'" + std::string(name.substr(0, 200)) +
                               "' is not an archive segment name (letters, digits, '-' and '_', "
                               "ending in " +
                               std::string(kSegmentExtension) + ")");
  }
}

namespace {

class FolderSegmentBytes final : public SegmentBytes {
 public:
  FolderSegmentBytes(fs::path path, UniqueFd fd, int64_t size)
      : path_(std::move(path)), fd_(std::move(fd)), size_(size) {}

  int64_t size() const override { return size_; }

  std::string read(int64_t offset, std::size_t n, std::string_view what) const override {
    std::string out(n, '\0');
    std::size_t done = 0;
    while (done < n) {
      ssize_t r =
          ::pread(fd_.get(), out.data() + done, n - done, offset + static_cast<int64_t>(done));
      if (r < 0) {
        if (errno == EINTR) continue;
        throwIoError(errno,
                     "archive segment '" + path_.string() + "': read of " + std::string(what));
      }
      if (r == 0) {
        throw DataLossError("archive segment '" + path_.string() +
                            "' is truncated: it ends inside " + std::string(what) + " (offset " +
                            std::to_string(offset) + ", " + std::to_string(n) + " bytes)");
      }
      done += static_cast<std::size_t>(r);
    }
    return out;
  }

 private:
  fs::path path_;
  UniqueFd fd_;
  int64_t size_;
};

// Renames `from` to `to` unless `to` exists (false then, nothing changed): renameat2's
// RENAME_NOREPLACE, or link + unlink where the filesystem lacks it.
bool renameWithoutReplacing(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return true;
  }
  int err = errno;
  if (err == EINVAL || err == ENOSYS) {
    if (::link(from.c_str(), to.c_str()) == 0) {
      ::unlink(from.c_str());
      return true;
    }
    err = errno;
  }
  if (err == EEXIST) return false;
  throwIoError(err, "archive segment '" + from.string() + "': rename to '" + to.string() + "'");
}

class FolderArchiveStore final : public ArchiveStore {
 public:
  explicit FolderArchiveStore(fs::path dir) : dir_(std::move(dir)) {}

  std::string describe() const override { return "archive folder '" + dir_.string() + "'"; }
  std::string locate(const std::string& name) const override { return (dir_ / name).string(); }

  std::vector<std::string> segmentNames() const override {
    std::vector<std::string> out;
    std::error_code ec;
    if (!fs::exists(dir_, ec)) {
      if (ec) throw UnavailableError(describe() + " cannot be read: " + ec.message());
      return out;
    }
    fs::directory_iterator it(dir_, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.empty() || name[0] == '.' || !name.ends_with(kSegmentExtension)) continue;
      if (!isSegmentName(name)) {  // fail closed: it may be a segment someone renamed
        throw DataLossError(describe() + " holds '" + name +
                            "', named like a segment but not as Loom names them; move it out "
                            "of the folder (or back to its name)");
      }
      out.push_back(std::move(name));
    }
    if (ec) throw UnavailableError(describe() + " cannot be listed: " + ec.message());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::unique_ptr<SegmentBytes> open(const std::string& name) const override {
    requireSegmentName(name);
    fs::path path = dir_ / name;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
      int err = errno;
      if (err == ENOENT) {
        throw NotFoundError("archive segment '" + path.string() + "' does not exist");
      }
      throwIoError(err, "archive segment '" + path.string() + "': open");
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
      throwIoError(errno, "archive segment '" + path.string() + "': stat");
    }
    return std::make_unique<FolderSegmentBytes>(path, std::move(fd),
                                                static_cast<int64_t>(st.st_size));
  }

  fs::path stagingDir() const override { return dir_; }

  void publish(const fs::path& staged, const std::string& name) override {
    requireSegmentName(name);
    fs::path target = dir_ / name;
    if (!renameWithoutReplacing(staged, target)) {
      throw AlreadyExistsError("archive segment '" + target.string() +
                               "' exists already; it was not replaced");
    }
    try {
      posix::fsyncDirectory(dir_);
    } catch (const Error& e) {
      throw UnavailableError("archive segment '" + target.string() +
                             "' was published but may not be durable (" + e.what() +
                             "); the outcome is unknown: list the segments before doing it again");
    }
  }

 private:
  fs::path dir_;
};

}  // namespace

std::shared_ptr<ArchiveStore> folderArchiveStore(fs::path dir) {
  return std::make_shared<FolderArchiveStore>(std::move(dir));
}

}  // namespace loom::sweep
