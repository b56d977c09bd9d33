// Loom's thin POSIX file helpers, for the filesystem content store and the archive segments
// (the descriptor is util/unique_fd.h): errno mapped to Loom errors (util/io_error.h; each
// message naming the operation, the path and what to do), whole-file reads and writes with
// EINTR and short writes handled, file and directory fsync, and millisecond file times.
// Thread-safety: free functions; a UniqueFd is used by one thread at a time.
#pragma once

#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "util/unique_fd.h"

namespace loom::posix {

// Throws the Loom error for errno `err` while doing `op` on `path` (util/io_error.h maps it).
[[noreturn]] void throwIoError(int err, std::string_view op, const std::filesystem::path& path);

using loom::UniqueFd;

// open(2) with O_CLOEXEC; throws throwIoError on failure.
UniqueFd openOrThrow(const std::filesystem::path& path, int flags, std::string_view op,
                     mode_t mode = 0600);
// Writes every byte (retrying short writes and EINTR); throws on failure.
void writeAll(int fd, std::string_view bytes, const std::filesystem::path& path);
// The same at `offset` (pwrite), leaving the file position alone.
void pwriteAll(int fd, std::string_view bytes, int64_t offset, const std::filesystem::path& path);
// fsync(2) of an open file; throws on failure.
void syncFile(int fd, const std::filesystem::path& path);
// Reads the whole file from offset 0; throws on failure.
std::string readAll(int fd, const std::filesystem::path& path);
// Makes the directory entry changes inside `dir` durable.
void fsyncDirectory(const std::filesystem::path& dir);
// Replaces (or creates) `path` with `bytes` whole or not at all: written to a temp file beside
// it (mode `mode`, created exclusively, never through a symlink), flushed, renamed over it, the
// folder flushed (best effort: the file is in place). On failure (a full disk, say) the temp
// file is removed, `path` is as it was, and the error says why (throwIoError); a missing
// folder is FailedPreconditionError. A device or pipe (`/dev/stdout`) is written through.
void replaceFileDurably(const std::filesystem::path& path, std::string_view bytes,
                        mode_t mode = 0600);
// Tests only: called with each folder fsyncDirectory made durable (nullptr: none). Lets a test
// model a disk that drops every directory change not flushed before a power loss.
void setDirectorySyncObserver(std::function<void(const std::filesystem::path&)> observer);
// readdir(3): the next entry of `dir` (opened from `path`), or nullptr at its end. A read
// error throws (throwIoError), so a folder that cannot be read to its end is never taken for
// a shorter one.
struct dirent* readEntry(DIR* dir, const std::filesystem::path& path);
// Whether `path` exists (stat(2), through links). Throws (throwIoError) when that cannot be
// told (EACCES on a folder on the way, ELOOP, EIO), so "cannot look" never reads as "not there".
bool pathExists(const std::filesystem::path& path);
// mkdir(2); true when it created the directory, false when it existed. Throws otherwise.
bool makeDirectory(const std::filesystem::path& dir);
// flock(2) LOCK_EX on `fd`, waiting and retrying EINTR; throws on failure.
void lockExclusive(int fd, const std::filesystem::path& path);

int64_t mtimeMillis(const struct stat& st);
// The timespec pair for futimens/utimensat: access time untouched, modification time `millis`.
void modificationTimes(int64_t millis, struct timespec out[2]);

}  // namespace loom::posix
