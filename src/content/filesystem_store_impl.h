// The private state of FilesystemContentStore, shared by filesystem_content_store.cc (the SPI
// methods) and filesystem_store_open.cc (opening: layout, lock files, stray temp cleanup).
// Thread-safety: the fields are set while opening and read-only afterwards, except the
// stripes' mutexes and the temp-file counter.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

#include "loom/content/filesystem_content_store.h"
#include "store_support.h"
#include "util/posix_file.h"

namespace loom::content {

// One lock stripe per first hex digit of the address.
inline constexpr std::size_t kLockStripes = 16;

// One lock stripe: the mutex serializes this process's threads, the flock on lockFd (taken
// after the mutex, since threads share the descriptor) serializes processes.
struct LockStripe {
  std::mutex mu;
  posix::UniqueFd lockFd;
  std::filesystem::path lockPath;
};

struct FilesystemContentStore::Impl {
  Impl(std::filesystem::path rootDir, std::shared_ptr<const Clock> clock);

  // "filesystem content store '<root>'", the prefix of error messages.
  std::string name;
  std::filesystem::path root;
  std::filesystem::path tmpDir;
  std::filesystem::path lockDir;
  detail::TouchClock touch;
  std::array<LockStripe, kLockStripes> stripes;
  uint64_t nonce = 0;  // tells this store's temp files from other stores' in one process
  std::atomic<uint64_t> nextTemp{0};
  int64_t strayRemoved = 0;
  int layout = kFilesystemLayoutVersion;  // of this store's LAYOUT file

  // Layout 2: <root>/<aa>/<address>; layout 1: <root>/<aa>/<bb>/<address>
  // (docs/spec/content-store.md).
  std::filesystem::path shardDir(std::string_view address) const {
    if (layout == 1) return root / address.substr(0, 2) / address.substr(2, 2);
    return root / address.substr(0, 2);
  }
  std::filesystem::path blobPath(std::string_view address) const {
    return shardDir(address) / address;
  }
  LockStripe& stripeOf(std::string_view address);
  // Creates a new temp file in tmp/ named after `stem`, flocked (so no store being opened
  // removes it) until the returned descriptor is closed; sets `path`.
  posix::UniqueFd createTemp(std::string_view stem, std::filesystem::path& path);

 private:
  void checkLayout();
  void openLocks();
  void removeStrayTemps();
  void checkMillisecondTimes();
};

// Holds one stripe: its mutex, then its flock. Keep it short: puts and deletes of a sixteenth
// of all addresses, in every process, wait for it.
class StripeLock {
 public:
  explicit StripeLock(LockStripe& stripe);
  ~StripeLock();
  StripeLock(const StripeLock&) = delete;
  StripeLock& operator=(const StripeLock&) = delete;

 private:
  LockStripe& stripe_;
  std::unique_lock<std::mutex> lock_;
};

}  // namespace loom::content
