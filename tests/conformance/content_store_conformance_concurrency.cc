// The ContentStore conformance suite, part 2: concurrency. Identical puts from many threads
// (one blob, consistent), a put racing a conditional delete (a blob touched at or after the
// cutoff always survives), and readers beside blobs that come and go (whole bytes or nothing).
#include <atomic>
#include <barrier>
#include <set>
#include <thread>

#include "content_store_conformance.h"
#include "loom/util/error.h"

namespace loom::content::conformance {
namespace {

TEST_P(ContentStoreConformance, ConcurrentIdenticalPutsStoreOneConsistentBlob) {
  constexpr int kThreads = 8;
  constexpr int kPutsPerThread = 10;
  const std::string bytes = randomBytes(256 * 1024, 42);
  std::barrier start(kThreads);
  std::vector<std::set<std::string>> addresses(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        for (int i = 0; i < kPutsPerThread; ++i) addresses[t].insert(store().put(bytes));
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << t << ": " << e.what();
        failures++;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(0, failures.load());
  const bool sealing = store().capabilities().sealsContent;
  const std::string address = sealing ? *addresses[0].begin() : sha256Hex(bytes);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(1u, addresses[t].size());
    EXPECT_EQ(address, *addresses[t].begin());
  }
  EXPECT_EQ(bytes, store().get(address));
  if (store().capabilities().enumerate) {
    std::map<std::string, BlobInfo> blobs = allBlobs(store());
    ASSERT_EQ(1u, blobs.size());
    if (sealing) {
      EXPECT_GT(blobs.begin()->second.size, static_cast<int64_t>(bytes.size()));
    } else {
      EXPECT_EQ(static_cast<int64_t>(bytes.size()), blobs.begin()->second.size);
    }
  }
}

TEST_P(ContentStoreConformance, ConcurrentDistinctPutsAndGetsAllLand) {
  constexpr int kThreads = 8;
  constexpr int kBlobsPerThread = 20;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < kBlobsPerThread; ++i) {
          std::string bytes = randomBytes(4096, static_cast<uint64_t>(t * 1000 + i));
          std::string address = store().put(bytes);
          if (store().get(address) != bytes) {
            ADD_FAILURE() << "thread " << t << " read back other bytes at " << address;
            failures++;
          }
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << t << ": " << e.what();
        failures++;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(0, failures.load());
  if (store().capabilities().enumerate) {
    EXPECT_EQ(static_cast<std::size_t>(kThreads * kBlobsPerThread), allBlobs(store()).size());
  }
}

// Each round: a blob touched long ago; the clock moves past the cutoff; then a put of the same
// bytes races deleteIfUntouchedSince, which the deleter repeats until the put has returned.
// The put touches at or after the cutoff, so whatever the interleaving, the blob must exist
// afterwards: a delete before the put is undone by it, a delete after it spares the blob.
TEST_P(ContentStoreConformance, PutRacingConditionalDeleteNeverLosesATouchedBlob) {
  LOOM_REQUIRE_CAPABILITY(deleteIfUntouchedSince);
  constexpr int kRounds = 150;
  std::barrier start(2);
  std::barrier finish(2);
  std::atomic<bool> putDone{false};
  std::atomic<int> deletes{0};
  std::atomic<int> failures{0};
  std::string address;  // written by the main thread between rounds (ordered by the barriers)
  std::thread deleter([&] {
    for (int r = 0; r < kRounds; ++r) {
      start.arrive_and_wait();
      try {
        int64_t cutoff = kT0 + 10 * r + 5;
        bool last = false;
        while (!last) {
          last = putDone;  // one more attempt after the put returned
          if (store().deleteIfUntouchedSince(address, cutoff)) deletes++;
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "round " << r << ": " << e.what();
        failures++;
      }
      finish.arrive_and_wait();
    }
  });
  for (int r = 0; r < kRounds; ++r) {
    std::string bytes = "round " + std::to_string(r);
    address = store().put(bytes);  // touched at kT0 + 10r
    clock().advance(10);           // the racing put touches at kT0 + 10r + 10
    putDone = false;
    start.arrive_and_wait();
    store().put(bytes);
    putDone = true;
    finish.arrive_and_wait();
    ASSERT_EQ(bytes, store().get(address)) << "round " << r << ": a touched blob was lost";
    if (store().capabilities().enumerate) {
      EXPECT_GE(store().stat(address)->lastTouchedMillis, kT0 + 10 * r + 5) << "round " << r;
    }
  }
  deleter.join();
  EXPECT_EQ(0, failures.load());
  RecordProperty("deletesBeforeThePut", deletes.load());
}

TEST_P(ContentStoreConformance, ReadersSeeWholeBlobsOrNothingWhileBlobsComeAndGo) {
  LOOM_REQUIRE_CAPABILITY(remove);
  const std::string bytes = randomBytes(64 * 1024, 7);
  // A sealing store's address is keyed: learn it from a put (removed again) before the race.
  const std::string address = store().capabilities().sealsContent ? store().put(bytes)
                                                                   : sha256Hex(bytes);
  if (store().capabilities().sealsContent) store().remove(address);
  std::atomic<bool> writing{true};
  std::atomic<int> failures{0};
  std::atomic<int> seen{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (writing) {
        try {
          std::optional<std::string> got = store().get(address);
          if (got && *got != bytes) {
            ADD_FAILURE() << "a reader saw partial or other bytes (" << got->size() << ")";
            failures++;
          }
          if (got) seen++;
        } catch (const std::exception& e) {
          ADD_FAILURE() << e.what();
          failures++;
          return;
        }
      }
    });
  }
  for (int i = 0; i < 60; ++i) {
    store().put(bytes);
    store().remove(address);
  }
  store().put(bytes);
  writing = false;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(0, failures.load());
  EXPECT_EQ(bytes, store().get(address));
}

}  // namespace
}  // namespace loom::content::conformance
