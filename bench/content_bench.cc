// Content store throughput (filesystem put and get of 4 kB blobs, target >= 20,000/s
// each). Blobs are distinct pseudo-random 4 kB contents from a fixed seed. A filesystem put is
// durable when it returns (temp file fdatasync, rename, folder fsync), so the raw cost of one
// 4 kB write + fdatasync on the same disk is measured beside it (BM_Fsync4k). The store lives
// under $TMPDIR (default /tmp): point TMPDIR at the disk to measure.
// Run: ./build/release/bench/loom_content_bench (figures in docs/benchmarks.md).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "content/sha256.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/content/memory_content_store.h"
#include "loom/content/sqlite_content_store.h"
#include "support/temp_dir.h"

namespace {

using namespace loom;

constexpr std::size_t kBlobBytes = 4096;
constexpr uint64_t kSeed = 20261129;

using loom::testing::TempDir;

// Distinct 4 kB blobs: pseudo-random streams from a fixed seed. Every BlobSource of a run
// gets its own stream, so no benchmark or repetition re-puts bytes an earlier one stored (a
// re-put is only a touch, much cheaper than a put).
class BlobSource {
 public:
  BlobSource() : random_(kSeed + nextStream_++), blob_(kBlobBytes, '\0') {}
  const std::string& next() {
    for (std::size_t i = 0; i < kBlobBytes; i += 8) {
      uint64_t word = random_();
      std::memcpy(blob_.data() + i, &word, 8);
    }
    return blob_;
  }

 private:
  static inline std::atomic<uint64_t> nextStream_{0};
  std::mt19937_64 random_;
  std::string blob_;
};

// A store folder whose 65,536 shard folders all exist, as in any store holding a few hundred
// thousand blobs; created once (it takes seconds) and shared by the "warm" benchmarks.
const std::filesystem::path& warmRoot() {
  static TempDir dir;
  static const std::filesystem::path root = [] {
    std::filesystem::path r = dir.path() / "content";
    content::FilesystemContentStore create(r, systemClock());
    constexpr char kHex[] = "0123456789abcdef";
    for (int a = 0; a < 256; ++a) {
      std::string aa{kHex[a >> 4], kHex[a & 15]};
      std::filesystem::create_directory(r / aa);
      for (int b = 0; b < 256; ++b) {
        std::filesystem::create_directory(r / aa / std::string{kHex[b >> 4], kHex[b & 15]});
      }
    }
    ::sync();
    return r;
  }();
  return root;
}

// One filesystem store shared by the benchmark's threads (set up by thread 0 before the
// start barrier of the timed loop, torn down after its end barrier).
struct SharedStore {
  explicit SharedStore(bool warm)
      : store(warm ? warmRoot() : fresh.path() / "content", systemClock()) {}
  TempDir fresh;
  content::FilesystemContentStore store;
};
std::unique_ptr<SharedStore> shared;

// Arg 1: a warm store (shard folders exist); 0: a new, empty store (each early put also
// creates and fsyncs its shard folders).
void BM_FilesystemPut(benchmark::State& state) {
  if (state.thread_index() == 0) shared = std::make_unique<SharedStore>(state.range(0) == 1);
  BlobSource blobs;
  for (auto _ : state) benchmark::DoNotOptimize(shared->store.put(blobs.next()));
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) shared.reset();
}
BENCHMARK(BM_FilesystemPut)
    ->ArgName("warm")
    ->Arg(0)
    ->Arg(1)
    ->Threads(1)
    ->Threads(8)
    ->UseRealTime()
    ->MinTime(2.0);

void BM_FilesystemPutMany(benchmark::State& state) {
  content::FilesystemContentStore store(warmRoot(), systemClock());
  BlobSource blobs;
  auto batchSize = static_cast<std::size_t>(state.range(0));
  std::vector<std::string> batch(batchSize);
  std::vector<std::string_view> views(batchSize);
  for (auto _ : state) {
    state.PauseTiming();
    for (std::size_t i = 0; i < batchSize; ++i) views[i] = batch[i] = blobs.next();
    state.ResumeTiming();
    benchmark::DoNotOptimize(store.putMany(views));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_FilesystemPutMany)->Arg(64)->Arg(256)->ArgName("batch")->UseRealTime()->MinTime(2.0);

// Gets of random addresses among 5,000 stored blobs (page cache warm), from 1 and 2 threads.
void BM_FilesystemGet(benchmark::State& state) {
  static std::vector<std::string> addresses;
  if (state.thread_index() == 0) {
    shared = std::make_unique<SharedStore>(true);
    if (addresses.empty()) {
      BlobSource blobs;
      std::vector<std::string> batch(500);
      std::vector<std::string_view> views(batch.size());
      while (addresses.size() < 5000) {
        for (std::size_t i = 0; i < batch.size(); ++i) views[i] = batch[i] = blobs.next();
        for (auto& a : shared->store.putMany(views)) addresses.push_back(std::move(a));
      }
    }
  }
  std::mt19937_64 pick(kSeed + static_cast<uint64_t>(state.thread_index()));
  for (auto _ : state) {
    auto bytes = shared->store.get(addresses[pick() % addresses.size()]);
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) shared.reset();
}
BENCHMARK(BM_FilesystemGet)->Threads(1)->Threads(2)->UseRealTime();

// The disk's floor for a durable put: create a file, write 4 kB, fdatasync, close, unlink.
void BM_Fsync4k(benchmark::State& state) {
  TempDir dir;
  BlobSource blobs;
  std::string path = (dir.path() / "probe").string();
  for (auto _ : state) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::string& blob = blobs.next();
    if (fd < 0 || ::write(fd, blob.data(), blob.size()) != static_cast<ssize_t>(blob.size()) ||
        ::fdatasync(fd) != 0) {
      state.SkipWithError("write or fdatasync failed");
    }
    ::close(fd);
    ::unlink(path.c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Fsync4k)->UseRealTime();

// For comparison: the SQLite store (one fsynced commit per put) and the memory store.
void BM_SqlitePut(benchmark::State& state) {
  TempDir dir;
  content::SqliteContentStore store((dir.path() / "content.db").string(), systemClock());
  BlobSource blobs;
  for (auto _ : state) benchmark::DoNotOptimize(store.put(blobs.next()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SqlitePut)->UseRealTime();

void BM_SqliteGet(benchmark::State& state) {
  TempDir dir;
  content::SqliteContentStore store((dir.path() / "content.db").string(), systemClock());
  BlobSource blobs;
  std::vector<std::string> addresses;
  for (int i = 0; i < 2000; ++i) addresses.push_back(store.put(blobs.next()));
  std::mt19937_64 pick(kSeed);
  for (auto _ : state) {
    auto bytes = store.get(addresses[pick() % addresses.size()]);
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SqliteGet)->UseRealTime();

void BM_MemoryPutGet(benchmark::State& state) {
  content::MemoryContentStore store(systemClock());
  BlobSource blobs;
  for (auto _ : state) {
    std::string address = store.put(blobs.next());
    benchmark::DoNotOptimize(store.get(address));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemoryPutGet);

}  // namespace

// SHA-256 of a 3 kB blob, the hash of every content address (ADR 0018): on the CPU's SHA
// extensions (extensions:1, skipped on a CPU without them) against libsodium's portable code.
void BM_Sha256(benchmark::State& state) {
  const std::string blob = BlobSource().next().substr(0, 3000);
  const bool extensions = state.range(0) != 0;
  if (extensions && !content::detail::Sha256::usesShaExtensions()) {
    state.SkipWithError("this CPU has no SHA extensions");
    return;
  }
  for (auto _ : state) {
    if (extensions) {
      benchmark::DoNotOptimize(content::detail::sha256(blob));
    } else {
      unsigned char digest[crypto_hash_sha256_BYTES];
      crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(blob.data()), blob.size());
      benchmark::DoNotOptimize(digest);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * blob.size()));
}
BENCHMARK(BM_Sha256)->Arg(0)->Arg(1)->ArgName("extensions");

BENCHMARK_MAIN();
