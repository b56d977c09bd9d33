// The EventStore conformance suite, part 3: concurrency. Racing appenders on one execution
// (exactly one winner per seq, the rest ConflictError, no gap, no duplicate) and many threads
// on different executions with readers beside them.
#include <atomic>
#include <barrier>
#include <set>
#include <thread>

#include "event_store_conformance.h"
#include "loom/util/error.h"

namespace loom::kernel::conformance {
namespace {

TEST_P(EventStoreConformance, ConcurrentAppendersOnOneExecutionGetExactlyOneWinnerPerSeq) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  store().append("race", 1, {started()});
  std::barrier roundStart(kThreads);
  std::vector<std::atomic<int>> wins(kRounds);
  std::vector<std::atomic<int>> conflicts(kRounds);
  std::atomic<int> otherErrors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        roundStart.arrive_and_wait();  // everyone finished the previous round
        std::string id = "r" + std::to_string(round) + "-t" + std::to_string(t);
        try {
          store().append("race", round + 2, {step(id)});
          wins[round]++;
        } catch (const ConflictError&) {
          conflicts[round]++;
        } catch (const std::exception& e) {
          ADD_FAILURE() << id << ": " << e.what();
          otherErrors++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(0, otherErrors.load());
  for (int round = 0; round < kRounds; ++round) {
    EXPECT_EQ(1, wins[round].load()) << "round " << round;
    EXPECT_EQ(kThreads - 1, conflicts[round].load()) << "round " << round;
  }
  auto events = store().read("race");
  ASSERT_EQ(static_cast<std::size_t>(kRounds) + 1, events.size());
  expectContiguous(events);
  std::set<std::string> stepIds;
  for (std::size_t i = 1; i < events.size(); ++i) {
    std::string id(events[i].data.at("stepId").get_string());
    EXPECT_EQ(0u, id.rfind("r" + std::to_string(i - 1) + "-", 0)) << id << " at seq " << i + 1;
    stepIds.insert(id);
  }
  EXPECT_EQ(static_cast<std::size_t>(kRounds), stepIds.size());
  EXPECT_EQ(kRounds, store().info("race")->steps);
}

TEST_P(EventStoreConformance, ManyThreadsAppendToDifferentExecutionsWithReadersBeside) {
  constexpr int kThreads = 8;
  constexpr int kAppends = 25;
  std::atomic<bool> writing{true};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string id = "exec-" + std::to_string(t);
      try {
        int64_t next = store().append(id, 1, {started("wf", "subject-" + std::to_string(t))});
        for (int i = 1; i < kAppends; ++i) {
          next = store().append(id, next, {step("s" + std::to_string(i), i)});
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << id << ": " << e.what();
        failures++;
      }
    });
  }
  // Readers see a prefix of each log: no gap, never a partial metadata update.
  std::thread reader([&] {
    while (writing.load()) {
      for (int t = 0; t < kThreads; ++t) {
        std::string id = "exec-" + std::to_string(t);
        auto info = store().info(id);
        auto events = store().read(id);
        expectContiguous(events);
        if (info) {
          EXPECT_LE(info->nextSeq - 1, static_cast<int64_t>(events.size())) << id;
        }
      }
    }
  });
  for (auto& t : threads) t.join();
  writing = false;
  reader.join();
  EXPECT_EQ(0, failures.load());
  auto all = store().list({});
  ASSERT_EQ(static_cast<std::size_t>(kThreads), all.size());
  for (const auto& info : all) {
    EXPECT_EQ(kAppends + 1, info.nextSeq) << info.id;
    EXPECT_EQ(kAppends - 1, info.steps) << info.id;
    auto events = store().read(info.id);
    ASSERT_EQ(static_cast<std::size_t>(kAppends), events.size());
    expectContiguous(events);
  }
}

}  // namespace
// A log read while its run appends is never mistaken for a corrupt one: each scan sees one
// consistent log (no row missing against its metadata, none past it).
TEST_P(EventStoreConformance, ReadsOfALogBeingAppendedAreNeverCorrupt) {
  store().append("live", 1, {started()});
  std::atomic<bool> done{false};
  std::thread writer([&] {
    int64_t next = 2;
    for (int i = 0; i < 300; ++i)
      next = store().append("live", next, {step("s" + std::to_string(i))});
    done = true;
  });
  int scans = 0;
  while (!done || scans == 0) {
    int64_t expected = 1;
    store().scan("live", 1, [&](const Event& e) { EXPECT_EQ(e.seq, expected++); });
    ++scans;
  }
  writer.join();
  EXPECT_EQ(store().read("live").size(), 301u);
}

}  // namespace loom::kernel::conformance
