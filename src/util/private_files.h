// A Loom home holds subjects' data in plain files (loom.db, its WAL, blobs, archive
// segments): whatever the process umask, what Loom creates there is its owner's alone.
// Folders 0700, files 0600. Thread-safe (plain system calls).
#pragma once

#include <filesystem>

namespace loom {

inline constexpr unsigned kPrivateFileMode = 0600;
inline constexpr unsigned kPrivateDirectoryMode = 0700;

// create_directories(dir), then chmod 0700 on `dir` (existing or not). Throws
// FailedPreconditionError naming the folder and what to do when it cannot.
void createPrivateDirectories(const std::filesystem::path& dir);

// chmod 0600 on `file` when it is a regular file or folder (through links) with any group or
// other bit; never on a device or a pipe (/dev/null given as a path). Best effort for a file
// Loom did not create (another owner): errors are ignored, as the open that follows reports
// what matters.
void restrictToOwner(const std::filesystem::path& file);

}  // namespace loom
