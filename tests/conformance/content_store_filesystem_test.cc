// Tests of the filesystem content store beyond the conformance suite: its on-disk layout,
// crashes (a temp file never renamed, a process killed in the middle of many puts), corrupt
// and misplaced blob files, another process racing a conditional delete, and putMany.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "content_store_conformance.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/util/error.h"
#include "util/posix_file.h"

namespace loom::content::conformance {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const fs::path& path, std::string_view bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

int64_t mtimeMillisOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(0, ::stat(path.c_str(), &st)) << path;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

std::size_t filesIn(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

template <typename E>
void expectErrorNaming(const std::function<void()>& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const E& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find(needle)) << e.what();
  }
}

class FilesystemContentStoreTest : public ::testing::Test {
 protected:
  fs::path root() const { return scratch_.path() / "content"; }
  std::unique_ptr<FilesystemContentStore> open() {
    return std::make_unique<FilesystemContentStore>(root(), clock_);
  }

  TempDir scratch_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kT0);
};

// A disk that drops every directory change not flushed before a power loss: a delete the store
// reported must have had its folder flushed after the unlink, before the call returned.
TEST_F(FilesystemContentStoreTest, EveryReportedDeleteIsDurableBeforeItReturns) {
  auto store = open();
  std::vector<std::string> addresses;
  for (int i = 0; i < 8; ++i) addresses.push_back(store->put("blob " + std::to_string(i)));
  clock_->advance(1000);
  std::vector<fs::path> synced;
  posix::setDirectorySyncObserver([&](const fs::path& dir) { synced.push_back(dir); });
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    synced.clear();
    fs::path file;
    for (const auto& f : fs::recursive_directory_iterator(root())) {
      if (f.path().filename() == addresses[i]) file = f.path();
    }
    ASSERT_FALSE(file.empty());
    bool deleted = i % 2 == 0 ? store->deleteIfUntouchedSince(addresses[i], kT0 + 1000)
                              : store->remove(addresses[i]);
    ASSERT_TRUE(deleted);
    bool flushed = std::find(synced.begin(), synced.end(), file.parent_path()) != synced.end();
    EXPECT_TRUE(flushed) << "after a power loss " << addresses[i] << " would come back";
  }
  posix::setDirectorySyncObserver(nullptr);
}

TEST_F(FilesystemContentStoreTest, BlobsAreShardedFilesWhoseMtimeIsTheLastTouch) {
  auto store = open();
  std::string address = store->put("abc");
  fs::path file = root() / "ba" / address;  // layout 2: one shard level
  EXPECT_EQ(file, store->blobPath(address));
  EXPECT_EQ("abc", readFile(file));
  EXPECT_EQ(kT0, mtimeMillisOf(file));
  clock_->advance(90'061);
  store->put("abc");
  EXPECT_EQ(kT0 + 90'061, mtimeMillisOf(file));
  EXPECT_EQ("loom filesystem content store, layout 2\n", readFile(root() / "LAYOUT"));
  EXPECT_EQ(0u, filesIn(root() / "tmp"));
  EXPECT_EQ(16u, filesIn(root() / "locks"));
}

// A store written with layout 1 (two shard levels) keeps that layout: its blobs are read,
// listed and deleted where they are, and new ones go beside them.
TEST_F(FilesystemContentStoreTest, ALayoutOneStoreKeepsItsTwoShardLevels) {
  std::string old = "written by layout 1";
  std::string oldAddress = sha256Hex(old);
  fs::create_directories(root() / "tmp");
  writeFile(root() / "LAYOUT", "loom filesystem content store, layout 1\n");
  fs::path oldFile = root() / oldAddress.substr(0, 2) / oldAddress.substr(2, 2) / oldAddress;
  fs::create_directories(oldFile.parent_path());
  writeFile(oldFile, old);
  auto store = open();
  EXPECT_EQ(old, store->get(oldAddress));
  std::string added = store->put("abc");
  EXPECT_EQ(root() / "ba" / "78" / added, store->blobPath(added));
  EXPECT_EQ("abc", readFile(root() / "ba" / "78" / added));
  std::map<std::string, BlobInfo> blobs = allBlobs(*store);
  EXPECT_EQ(2u, blobs.size());
  EXPECT_TRUE(blobs.count(oldAddress));
  EXPECT_TRUE(store->remove(oldAddress));
  EXPECT_FALSE(fs::exists(oldFile));
  EXPECT_EQ("loom filesystem content store, layout 1\n", readFile(root() / "LAYOUT"));
}

// Makes every file in `dir` two minutes old: strays younger than a minute are left alone.
void backdate(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    fs::last_write_time(entry.path(), fs::file_time_type::clock::now() - std::chrono::minutes(2));
  }
}

TEST_F(FilesystemContentStoreTest, CrashBetweenTempWriteAndRenameLeavesNothingVisible) {
  std::string kept;
  {
    auto store = open();
    kept = store->put("kept");
  }
  // What a put killed before its rename leaves: a partial temp file, and some other partial
  // file in tmp/.
  std::string lost = randomBytes(10'000, 3);
  std::string lostAddress = sha256Hex(lost);
  writeFile(root() / "tmp" / (lostAddress + ".4242.7.0.tmp"), lost.substr(0, 4096));
  writeFile(root() / "tmp" / "partial", "half a blo");
  backdate(root() / "tmp");
  auto store = open();
  EXPECT_EQ(2, store->strayTempFilesRemoved());
  EXPECT_EQ(0u, filesIn(root() / "tmp"));
  EXPECT_FALSE(store->has(lostAddress));
  EXPECT_EQ(std::nullopt, store->get(lostAddress));
  std::map<std::string, BlobInfo> blobs = allBlobs(*store);
  ASSERT_EQ(1u, blobs.size());
  EXPECT_EQ(kept, blobs.begin()->first);
  EXPECT_EQ(lostAddress, store->put(lost));  // the put is simply run again
  EXPECT_EQ(lost, store->get(lostAddress));
}

// Processes opening a new home at once: a temp file just created (not yet flocked by its
// writer) is not taken for a stray.
TEST_F(FilesystemContentStoreTest, OpeningLeavesAYoungUnlockedTempFile) {
  open();
  fs::path young = root() / "tmp" / "young.tmp";
  writeFile(young, "just created");
  EXPECT_EQ(0, open()->strayTempFilesRemoved());
  EXPECT_TRUE(fs::exists(young));
}

TEST_F(FilesystemContentStoreTest, OpeningLeavesATempFileALiveWriterHolds) {
  open();
  fs::path inflight = root() / "tmp" / "inflight.tmp";
  writeFile(inflight, "being written");
  int fd = ::open(inflight.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, ::flock(fd, LOCK_EX));  // as another process's put holds it
  backdate(root() / "tmp");
  EXPECT_EQ(0, open()->strayTempFilesRemoved());
  EXPECT_TRUE(fs::exists(inflight));
  ::close(fd);  // that process died
  EXPECT_EQ(1, open()->strayTempFilesRemoved());
  EXPECT_FALSE(fs::exists(inflight));
}

// A child process puts blobs of assorted sizes as fast as it can and is killed with SIGKILL;
// whatever the moment, every blob visible afterwards is whole and tmp/ is cleaned on reopen.
TEST_F(FilesystemContentStoreTest, SigkillInTheMiddleOfManyPutsLeavesOnlyWholeBlobs) {
  open();
  for (int delayMillis : {40, 95, 170}) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        FilesystemContentStore store(root(), systemClock());
        for (uint64_t i = 0;; ++i) {
          store.put(randomBytes(1 + (i * 7919) % 200'000, i + 1000 * delayMillis));
        }
      } catch (const std::exception&) {
        std::_Exit(3);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMillis));
    ASSERT_EQ(0, ::kill(child, SIGKILL));
    int status = 0;
    ASSERT_EQ(child, ::waitpid(child, &status, 0));
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child stopped by itself: " << status;
  }
  backdate(root() / "tmp");  // the store removes strays a minute old
  auto store = open();
  EXPECT_EQ(0u, filesIn(root() / "tmp"));
  std::map<std::string, BlobInfo> blobs = allBlobs(*store);
  EXPECT_GT(blobs.size(), 0u);
  for (const auto& [address, info] : blobs) {
    std::optional<std::string> bytes;
    ASSERT_NO_THROW(bytes = store->get(address)) << address;
    ASSERT_TRUE(bytes);
    EXPECT_EQ(info.size, static_cast<int64_t>(bytes->size()));
  }
}

TEST_F(FilesystemContentStoreTest, CorruptedBlobIsDataLossNamingTheAddressUntilPutAgain) {
  auto store = open();
  std::string bytes = randomBytes(4096, 5);
  std::string address = store->put(bytes);
  {
    std::fstream file(store->blobPath(address), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(1000);
    file.put(static_cast<char>(bytes[1000] ^ 0x20));  // one flipped bit
  }
  expectErrorNaming<DataLossError>([&] { store->get(address); }, address);
  EXPECT_TRUE(store->has(address));
  EXPECT_TRUE(store->stat(address));
  EXPECT_EQ(address, store->put(bytes));  // re-running the producing step repairs it
  EXPECT_EQ(bytes, store->get(address));
}

TEST_F(FilesystemContentStoreTest, TruncatedBlobIsDataLoss) {
  auto store = open();
  std::string bytes = randomBytes(10'000, 6);
  std::string address = store->put(bytes);
  fs::resize_file(store->blobPath(address), 5000);
  expectErrorNaming<DataLossError>([&] { store->get(address); }, address);
  store->put(bytes);
  EXPECT_EQ(bytes, store->get(address));
}

TEST_F(FilesystemContentStoreTest, FileUnderAWrongAddressIsDataLoss) {
  auto store = open();
  std::string address = sha256Hex("what the address promises");
  writeFile(store->blobPath(address), "other bytes");
  expectErrorNaming<DataLossError>([&] { store->get(address); }, address);
  EXPECT_TRUE(store->has(address));
}

TEST_F(FilesystemContentStoreTest, ForeignFilesAreNotBlobs) {
  auto store = open();
  std::string address = store->put("real");
  writeFile(root() / "ab" / "cd" / "notes.txt", "x");
  writeFile(root() / "zz" / "00" / sha256Hex("zz"), "zz");
  std::string misplaced = sha256Hex("misplaced");
  writeFile(root() / "00" / "00" / misplaced, "misplaced");  // valid name, wrong shard
  std::map<std::string, BlobInfo> blobs = allBlobs(*store);
  ASSERT_EQ(1u, blobs.size());
  EXPECT_EQ(address, blobs.begin()->first);
}

// An operator moved a blob file to another disk and left a symbolic link: it is a blob like
// any other, listed, read and counted.
TEST_F(FilesystemContentStoreTest, ABlobFileMovedAwayBehindASymbolicLinkIsStillABlob) {
  auto store = open();
  std::string address = store->put("moved to another disk");
  fs::path elsewhere = scratch_.path() / "other-disk" / address;
  fs::create_directories(elsewhere.parent_path());
  fs::rename(store->blobPath(address), elsewhere);
  fs::create_symlink(elsewhere, store->blobPath(address));
  EXPECT_TRUE(store->has(address));
  EXPECT_EQ(store->get(address), "moved to another disk");
  EXPECT_EQ(allBlobs(*store).count(address), 1u);
  // Deleting it would unlink only the link: a delete refuses, and the bytes stay readable.
  clock_->advance(10);
  expectErrorNaming<FailedPreconditionError>(
      [&] { store->deleteIfUntouchedSince(address, clock_->nowMillis()); }, "symbolic link");
  expectErrorNaming<FailedPreconditionError>([&] { store->remove(address); }, "move the file back");
  EXPECT_EQ(store->get(address), "moved to another disk");
  EXPECT_TRUE(fs::exists(elsewhere));
}

// Something in a blob's way is never "no such blob": a link whose disk is gone, a folder in
// place of a blob file, a file in place of a shard folder each fail every read and the listing.
TEST_F(FilesystemContentStoreTest, WhatStandsInABlobsWayIsAnErrorNotAnAbsentBlob) {
  auto store = open();
  std::string linked = store->put("on a disk that is not mounted");
  fs::path elsewhere = scratch_.path() / "unmounted" / linked;
  fs::create_directories(elsewhere.parent_path());
  fs::rename(store->blobPath(linked), elsewhere);
  fs::create_symlink(elsewhere, store->blobPath(linked));
  fs::remove_all(elsewhere.parent_path());
  expectErrorNaming<UnavailableError>([&] { store->has(linked); }, "symbolic link");
  expectErrorNaming<UnavailableError>([&] { store->get(linked); }, "symbolic link");
  expectErrorNaming<UnavailableError>([&] { allBlobs(*store); }, "symbolic link");
  fs::remove(store->blobPath(linked));

  std::string folder = store->put("a folder took its place");
  fs::remove(store->blobPath(folder));
  fs::create_directory(store->blobPath(folder));
  expectErrorNaming<DataLossError>([&] { store->has(folder); }, "not a regular file");
  expectErrorNaming<DataLossError>([&] { store->get(folder); }, "not a regular file");
  expectErrorNaming<DataLossError>([&] { allBlobs(*store); }, "not a regular file");
  fs::remove(store->blobPath(folder));

  std::string sharded = store->put("its shard folder became a file");
  fs::path shard = store->blobPath(sharded).parent_path();
  fs::remove_all(shard);
  writeFile(shard, "not a folder");
  expectErrorNaming<DataLossError>([&] { store->has(sharded); }, "is a file");
  expectErrorNaming<DataLossError>([&] { store->get(sharded); }, "is a file");
  expectErrorNaming<DataLossError>([&] { allBlobs(*store); }, "is a file");
}

// Another process puts the same bytes while this one repeats deleteIfUntouchedSince until the
// child has exited: the stripe flock makes the check and the unlink atomic against its put.
TEST_F(FilesystemContentStoreTest, ConditionalDeleteIsAtomicAgainstAPutInAnotherProcess) {
  auto store = open();
  for (int r = 0; r < 30; ++r) {
    std::string bytes = "shared " + std::to_string(r);
    std::string address = store->put(bytes);  // touched at kT0 + 10r
    clock_->advance(10);
    int pipeFds[2];
    ASSERT_EQ(0, ::pipe(pipeFds));
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(pipeFds[1]);
      try {
        FilesystemContentStore other(root(), std::make_shared<ManualClock>(kT0 + 10 * r + 10));
        char go = 0;
        if (::read(pipeFds[0], &go, 1) != 1) std::_Exit(2);
        other.put(bytes);
        std::_Exit(0);
      } catch (const std::exception&) {
        std::_Exit(3);
      }
    }
    ::close(pipeFds[0]);
    ASSERT_EQ(1, ::write(pipeFds[1], "g", 1));
    ::close(pipeFds[1]);
    int status = 0;
    for (;;) {
      pid_t done = ::waitpid(child, &status, WNOHANG);
      store->deleteIfUntouchedSince(address, kT0 + 10 * r + 5);
      if (done == child) break;
    }
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << r;
    ASSERT_EQ(bytes, store->get(address)) << "round " << r << ": a touched blob was lost";
  }
}

TEST_F(FilesystemContentStoreTest, PutManyStoresEveryBlobAndTouchesExistingOnes) {
  auto store = open();
  std::string existing = store->put("existing");
  clock_->advance(100);
  std::vector<std::string> bytes;
  for (int i = 0; i < 300; ++i) bytes.push_back(randomBytes(4096, 500 + i));
  bytes.push_back(bytes[7]);
  bytes.push_back("existing");
  std::vector<std::string_view> batch(bytes.begin(), bytes.end());
  std::vector<std::string> addresses = store->putMany(batch);
  ASSERT_EQ(bytes.size(), addresses.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    EXPECT_EQ(sha256Hex(bytes[i]), addresses[i]);
    EXPECT_EQ(bytes[i], store->get(addresses[i]));
  }
  EXPECT_EQ(kT0 + 100, store->stat(existing)->lastTouchedMillis);
  EXPECT_EQ(301u, allBlobs(*store).size());
  EXPECT_EQ(0u, filesIn(root() / "tmp"));
  EXPECT_TRUE(store->putMany({}).empty());
}

TEST_F(FilesystemContentStoreTest, LayoutFromANewerBuildOrUnreadableIsRefused) {
  open();
  writeFile(root() / "LAYOUT", "loom filesystem content store, layout 99\n");
  expectErrorNaming<FailedPreconditionError>([&] { open(); }, "layout 99");
  writeFile(root() / "LAYOUT", "something else");
  expectErrorNaming<DataLossError>([&] { open(); }, (root() / "LAYOUT").string());
}

}  // namespace
}  // namespace loom::content::conformance
