// The ContentStore conformance suite: the contract written in include/loom/content/
// content_store.h as tests every implementation passes (content_store_conformance.cc and
// content_store_conformance_concurrency.cc). An implementation joins with one line: its
// factory in the list of content_store_implementations.cc. Also the helpers the
// implementation-specific tests beside it share (scratch directories, random bytes, a walk of
// every blob).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "loom/content/content_store.h"
#include "loom/util/clock.h"
#include "support/temp_dir.h"

namespace loom::content::conformance {

using loom::testing::TempDir;

// Touch times of the suite start here (ms since the epoch, on a ManualClock).
inline constexpr int64_t kT0 = 1'780'000'000'000;

struct ContentStoreFactory {
  std::string name;  // test name suffix: letters, digits and underscores
  // Opens the store kept under `dir` (fresh for each test, removed after the store is
  // destroyed), reading touch times from `clock`. Called again with the same `dir` it reopens
  // a persistent store.
  std::function<std::unique_ptr<ContentStore>(const std::filesystem::path& dir,
                                              std::shared_ptr<const Clock> clock)>
      open;
  bool persistent = false;  // blobs and touch times survive closing and reopening
  // Why the implementation cannot run here (no server); unset or "": it can.
  std::function<std::string()> unavailable;
};

// Gives each TEST_P a fresh, empty store of the parameter's implementation on a ManualClock
// at kT0.
class ContentStoreConformance : public ::testing::TestWithParam<ContentStoreFactory> {
 protected:
  void SetUp() override {
    if (GetParam().unavailable) {
      std::string why = GetParam().unavailable();
      if (!why.empty()) GTEST_SKIP() << why;
    }
    store_ = GetParam().open(scratch_.path(), clock_);
  }
  void TearDown() override { store_.reset(); }
  ContentStore& store() { return *store_; }
  ManualClock& clock() { return *clock_; }
  // Closes the store and opens it again on the same directory.
  void reopen() {
    store_.reset();
    store_ = GetParam().open(scratch_.path(), clock_);
  }

 private:
  TempDir scratch_;  // declared first: outlives the store
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kT0);
  std::unique_ptr<ContentStore> store_;
};

// Skips the test unless the store declares capability `name` (a ContentCapabilities field).
#define LOOM_REQUIRE_CAPABILITY(name)                                                  \
  do {                                                                                 \
    if (!store().capabilities().name) GTEST_SKIP() << "store lacks capability " #name; \
  } while (0)

inline void PrintTo(const ContentStoreFactory& factory, std::ostream* os) { *os << factory.name; }
std::string factoryName(const ::testing::TestParamInfo<ContentStoreFactory>& info);

// `n` pseudo-random bytes (every byte value, NULs included), the same for the same seed.
std::string randomBytes(std::size_t n, uint64_t seed);
// Every blob of the store by address, through forEachBlob; fails the test on a duplicate.
std::map<std::string, BlobInfo> allBlobs(const ContentStore& store);

}  // namespace loom::content::conformance
