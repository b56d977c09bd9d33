// The group-commit queue of the SQLite event store (sqlite_group_commit.h).
#include "sqlite_group_commit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace loom::kernel {
namespace {

struct Numbered {
  int id = 0;
  int committedIn = -1;  // the group that committed it
};

TEST(GroupCommitQueueTest, MergesConcurrentRequestsAndCommitsEachOnce) {
  constexpr int kThreads = 16;
  constexpr int kPerThread = 20;
  std::atomic<int> groups{0};
  std::atomic<int> inCommit{0};
  std::atomic<bool> overlapped{false};
  GroupCommitQueue<Numbered> queue([&](const std::vector<Numbered*>& group) {
    if (inCommit.fetch_add(1) != 0) overlapped = true;
    int g = groups.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a slow fsync
    for (Numbered* r : group) {
      EXPECT_EQ(-1, r->committedIn) << "request " << r->id << " committed twice";
      r->committedIn = g;
    }
    inCommit.fetch_sub(1);
  });
  std::vector<std::thread> threads;
  std::atomic<int> uncommitted{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Numbered r{t * kPerThread + i};
        queue.submit(r);
        if (r.committedIn < 0) uncommitted++;  // returned before its group committed
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(0, uncommitted.load());
  EXPECT_FALSE(overlapped.load()) << "two groups committed at once";
  EXPECT_LT(groups.load(), kThreads * kPerThread);
}

}  // namespace
}  // namespace loom::kernel
