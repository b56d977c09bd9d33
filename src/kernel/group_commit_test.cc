// The group-commit queue (group_commit.h) shared by the SQLite and PostgreSQL event stores.
#include "group_commit.h"

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

// Two runs whose steps alternate with a commit each would never share one: the leader waits a
// little for the sibling that submitted recently, so most commits carry both.
TEST(GroupCommitQueueTest, TwoAlternatingWritersShareCommits) {
  constexpr int kPerThread = 60;
  std::atomic<int> groups{0};
  GroupCommitQueue<Numbered> queue([&](const std::vector<Numbered*>& group) {
    int g = groups.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // an fsync
    for (Numbered* r : group) r->committedIn = g;
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Numbered r{t * kPerThread + i};
        queue.submit(r);
        EXPECT_GE(r.committedIn, 0);
        std::this_thread::sleep_for(std::chrono::microseconds(50));  // the next step's work
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LT(groups.load(), 2 * kPerThread * 8 / 10) << "requests per commit stayed near 1";
}

// A lone writer is its own leader every time: each request is committed in its own group,
// in order, and nothing waits for siblings that do not exist.
TEST(GroupCommitQueueTest, ALoneWriterCommitsEachRequestInItsOwnGroup) {
  std::vector<int> committed;
  GroupCommitQueue<Numbered> queue([&](const std::vector<Numbered*>& group) {
    ASSERT_EQ(group.size(), 1u);
    committed.push_back(group[0]->id);
  });
  for (int i = 0; i < 50; ++i) {
    Numbered r{i};
    queue.submit(r);
  }
  ASSERT_EQ(committed.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(committed[i], i);
}

}  // namespace
}  // namespace loom::kernel
