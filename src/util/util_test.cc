// util: the worker pool, the manual clock, timestamps and owner-only files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>

#include "loom/util/clock.h"
#include "loom/util/error.h"
#include "support/temp_dir.h"
#include "util/private_files.h"
#include "util/worker_pool.h"

namespace loom {
namespace {

TEST(WorkerPool, RunsEveryPostedJobBeforeItIsDestroyed) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(3);
    for (int i = 0; i < 500; ++i) pool.post([&] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 500);
}

TEST(ManualClock, MovesOnlyWhenToldAndSleepAdvancesIt) {
  ManualClock clock(1'000);
  EXPECT_EQ(clock.nowMillis(), 1'000);
  clock.advance(250);
  EXPECT_EQ(clock.nowMillis(), 1'250);
  clock.sleepMillis(50);
  EXPECT_EQ(clock.nowMillis(), 1'300);
}

TEST(Timestamps, RoundTripAsRfc3339AndRefuseOtherText) {
  int64_t t = 1'780'000'000'123;
  std::string text = formatTimestamp(t);
  EXPECT_EQ(text.back(), 'Z') << text;
  EXPECT_EQ(parseTimestamp(text), t);
  EXPECT_THROW(parseTimestamp("yesterday"), Error);
}

TEST(PrivateFiles, FoldersAndFilesAreTheOwnersOnly) {
  testing::TempDir dir("util");
  auto nested = dir.path() / "a" / "b";
  createPrivateDirectories(nested);
  struct stat st {};
  ASSERT_EQ(::stat(nested.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto file = dir.write("a/secret.txt", "key");
  ::chmod(file.c_str(), 0644);
  restrictToOwner(file);
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace
}  // namespace loom
