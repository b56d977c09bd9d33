// The EventStore conformance suite, worker presence and code upgrades (docs/spec/leases.md
// "Workers", docs/spec/events.md CODE_UPGRADED): a worker's word counts until it expires by
// the store's clock and is replaced by its next; a run's code version in its metadata moves
// with a CODE_UPGRADED, sealed or not.
#include "event_store_conformance.h"
#include "loom/util/error.h"

namespace loom::kernel::conformance {
namespace {

WorkerPresence word(const std::string& id, std::vector<std::string> runs,
                    std::vector<std::string> leaves = {}) {
  WorkerPresence w;
  w.owner = LeaseOwner{id, "host-" + id, 42, "boot-1", "pid:[4026531836]", 7};
  w.runs = std::move(runs);
  w.leaves = std::move(leaves);
  return w;
}

TEST_P(EventStoreConformance, AWorkersWordCountsUntilItExpiresAndItsNextReplacesIt) {
  EXPECT_TRUE(store().liveWorkers().empty());
  int64_t t0 = clock().nowMillis();
  store().announceWorker(word("w1", {"v1"}, {"v0"}), 10'000);
  store().announceWorker(word("w2", {"v2"}), 20'000);
  auto live = store().liveWorkers();
  ASSERT_EQ(live.size(), 2U);
  EXPECT_EQ(live[0].owner.id, "w1");
  EXPECT_EQ(live[0].owner.host, "host-w1");
  EXPECT_EQ(live[0].owner.pid, 42);
  EXPECT_EQ(live[0].runs, std::vector<std::string>{"v1"});
  EXPECT_EQ(live[0].leaves, std::vector<std::string>{"v0"});
  EXPECT_EQ(live[0].seenAtMillis, t0);
  EXPECT_EQ(live[0].expiresAtMillis, t0 + 10'000);

  store().announceWorker(word("w1", {"v0", "v1"}), 10'000);  // the files were put back
  live = store().liveWorkers();
  ASSERT_EQ(live.size(), 2U);
  EXPECT_EQ(live[0].runs, (std::vector<std::string>{"v0", "v1"}));
  EXPECT_TRUE(live[0].leaves.empty());

  clock().advance(10'000);
  live = store().liveWorkers();
  ASSERT_EQ(live.size(), 1U) << "w1's word expired";
  EXPECT_EQ(live[0].owner.id, "w2");
  store().announceWorker(word("w2", {"v2"}), 0);  // it stopped
  EXPECT_TRUE(store().liveWorkers().empty());
}

TEST_P(EventStoreConformance, AWordWithoutAnOwnerOrWithANegativeTtlIsRefused) {
  EXPECT_THROW(store().announceWorker(word("", {"v1"}), 1'000), InvalidArgumentError);
  EXPECT_THROW(store().announceWorker(word("w1", {"v1"}), -1), InvalidArgumentError);
  EXPECT_TRUE(store().liveWorkers().empty());
}

TEST_P(EventStoreConformance, ACodeUpgradeMovesTheRunsCodeVersion) {
  Event start = started();
  start.data["codeVersion"] = "v1";
  store().append("e1", 1, {start, step("s1")});
  store().append("e1", 3, {codeUpgraded("v2", std::string("v1"), kT0 + 5)});
  auto info = store().info("e1");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->codeVersion, "v2");
  EXPECT_EQ(info->status, ExecutionStatus::kRunning);
  EXPECT_EQ(info->nextSeq, 4);
  auto log = store().read("e1");
  ASSERT_EQ(log.size(), 3U);
  EXPECT_EQ(log[2].type, EventType::kCodeUpgraded);
  EXPECT_EQ(log[2].data.at("codeVersion"), "v2");
  EXPECT_EQ(log[2].data.at("from"), "v1");
  for (const auto& listed : store().list({})) {
    EXPECT_EQ(listed.codeVersion, "v2") << "list() carries the moved version";
  }
  EventStore::ClaimRequest onV2{.owner = {"a", "host-a", 1}, .ttlMillis = 10'000, .limit = 5,
                                .codeVersion = "v2"};
  EXPECT_EQ(store().claimRunnable(onV2).size(), 1U) << "a worker of v2 claims it now";
}

}  // namespace
}  // namespace loom::kernel::conformance
