// claimCheckRefsOf (broad) and trustedClaimCheckRefsOf (D11 rule 3), and the one-pass
// removeCitedByOthers with its early exit.
#include "compliance/claim_check_refs.h"

#include <gtest/gtest.h>

#include "erase_test_util.h"

namespace loom::compliance {
namespace {

using testutil::addressOf;
using testutil::World;
using Ids = std::set<std::string, std::less<>>;

class ClaimCheckRefsTest : public ::testing::Test {
 protected:
  CitationSources sources() { return CitationSources{&w_.events, &w_.archive, &w_.snapshots}; }
  World w_;
};

kernel::Event step(json::value output) {
  return kernel::stepCompleted("agent#turn:0:tool:0", "tool", "fetch", std::move(output), 0);
}

TEST_F(ClaimCheckRefsTest, VisitsEveryEnvelopeShapedRefAtAnyDepth) {
  auto top = w_.offload("top");
  auto nested = w_.offload("nested");
  auto inDigest = w_.offload("in a digest");
  json::value withDigest = top;
  withDigest.as_object()["digest"] = json::object{{"quoted", inDigest}};
  json::value value =
      json::object{{"a", withDigest},
                   {"b", json::array{json::object{{"x", nested}}}},
                   {"bareRef", content::contentRef(std::string(64, 'a'))},  // not an envelope's ref
                   {"badRef", json::object{{"__loomClaimCheck", 1}, {"ref", "not a ref"}}}};
  std::vector<std::string> seen;
  visitEnvelopeRefs(value, [&](std::string_view a, const json::object&) { seen.emplace_back(a); });
  EXPECT_EQ(seen,
            (std::vector<std::string>{addressOf(top), addressOf(inDigest), addressOf(nested)}));
}

TEST_F(ClaimCheckRefsTest, TrustsOnlyTheTopOfAStepOutputThroughOneTaintWrapper) {
  auto e = w_.offload("blob");
  EXPECT_EQ(trustedClaimCheckRefOf(step(e)), addressOf(e));
  EXPECT_EQ(trustedClaimCheckRefOf(step(effects::tainted(e, "mcp:x"))), addressOf(e));
  EXPECT_FALSE(trustedClaimCheckRefOf(step(json::object{{"page", e}})));
  EXPECT_FALSE(trustedClaimCheckRefOf(step(effects::tainted(effects::tainted(e, "a"), "b"))));
  EXPECT_FALSE(trustedClaimCheckRefOf(kernel::executionCompleted(e, 0)));
  json::value unretained = w_.offload("telemetry", /*retain=*/false);
  EXPECT_EQ(trustedClaimCheckRefOf(step(unretained)), addressOf(unretained))
      << "the position is trusted whatever the retain flag";
}

TEST_F(ClaimCheckRefsTest, BroadCollectionReadsLiveLogsArchiveAndSnapshots) {
  auto live = w_.offload("live");
  auto archived = w_.offload("archived");
  auto snapped = w_.offload("snapped");
  w_.run("e1", "alice", {json::object{{"nested", live}}});
  w_.run("e2", "alice", {archived});
  w_.archiveExecution("e2");
  w_.snapshot("e1", "alice", snapped);
  w_.run("other", "bob", {w_.offload("not ours")});

  auto e1 = claimCheckRefsOf(sources(), "e1");
  EXPECT_EQ(e1.size(), 2u);
  EXPECT_TRUE(e1.contains(addressOf(live)));
  EXPECT_TRUE(e1.contains(addressOf(snapped)));
  auto e2 = claimCheckRefsOf(sources(), "e2");
  ASSERT_EQ(e2.size(), 1u);
  const ClaimCheckRef& ref = e2.begin()->second;
  EXPECT_EQ(ref.address, addressOf(archived));
  EXPECT_EQ(ref.size, 8);
  EXPECT_EQ(ref.digest, json::value(json::object{{"preview", "p"}}));

  auto subject = claimCheckRefsOfSubject(sources(), "alice");
  EXPECT_EQ(subject.size(), 3u);
  auto listed = executionsOfSubject(sources(), "alice");
  EXPECT_EQ(listed.ids, (Ids{"e1", "e2"}));
  EXPECT_EQ(listed.live.size(), 1u);
  EXPECT_EQ(listed.archived.size(), 1u);
}

TEST_F(ClaimCheckRefsTest, TrustedCollectionIgnoresNestedLookAlikesAndVouchedSnapshots) {
  auto top = w_.offload("top");
  auto nested = w_.offload("nested");
  auto snapped = w_.offload("snapped");
  w_.run("e1", "bob", {top, json::object{{"forged", nested}}});
  w_.snapshot("e1", "bob", snapped);
  EXPECT_EQ(trustedClaimCheckRefsOf(sources(), "e1"), Ids{addressOf(top)});
}

TEST_F(ClaimCheckRefsTest, ASnapshotCountsWhenNoStepCompletedIsLeft) {
  auto snapped = w_.offload("snapped");
  w_.snapshot("gone", "bob", json::object{{"deep", json::object{{"ref", snapped.at("ref")}}}});
  EXPECT_EQ(trustedClaimCheckRefsOf(sources(), "gone"), Ids{addressOf(snapped)})
      << "the snapshot is the sole evidence: every address it cites counts";
}

TEST_F(ClaimCheckRefsTest, TrustedCollectionReadsArchivedSteps) {
  auto top = w_.offload("top");
  w_.run("e1", "bob", {top});
  w_.archiveExecution("e1");
  EXPECT_EQ(trustedClaimCheckRefsOf(sources(), "e1"), Ids{addressOf(top)});
}

// An event store that counts the logs it is asked to scan.
class ScanCounter : public kernel::ForwardingEventStore {
 public:
  using ForwardingEventStore::ForwardingEventStore;
  void scan(const std::string& id, int64_t from,
            const std::function<void(const kernel::Event&)>& visit) const override {
    ++scans;
    ForwardingEventStore::scan(id, from, visit);
  }
  mutable int scans = 0;
};

TEST_F(ClaimCheckRefsTest, RemoveCitedByOthersStopsOnceEveryCandidateIsAccountedFor) {
  auto a = w_.offload("a");
  auto b = w_.offload("b");
  w_.run("e1", "bob", {a});
  w_.run("e2", "carol", {b});
  for (int i = 3; i <= 9; ++i) w_.run("e" + std::to_string(i), "dave", {json::object{}});
  ScanCounter counting(w_.events);
  CitationSources s{&counting, &w_.archive, &w_.snapshots};
  Ids candidates{addressOf(a), addressOf(b)};
  EXPECT_EQ(removeCitedByOthers(s, "alice", {}, candidates), 2);
  EXPECT_TRUE(candidates.empty());
  EXPECT_EQ(counting.scans, 2) << "e3..e9 need not be read";
}

TEST_F(ClaimCheckRefsTest, RemoveCitedByOthersSkipsTheSubjectAndLogsWithoutSteps) {
  auto a = w_.offload("a");
  w_.run("mine", "alice", {a});
  w_.run("empty", "bob", {});
  ScanCounter counting(w_.events);
  CitationSources s{&counting, &w_.archive, &w_.snapshots};
  Ids candidates{addressOf(a)};
  EXPECT_EQ(removeCitedByOthers(s, "alice", {"mine"}, candidates), 0);
  EXPECT_EQ(candidates.size(), 1u);
  EXPECT_EQ(counting.scans, 0);
}

TEST_F(ClaimCheckRefsTest, RemoveCitedByOthersCountsASnapshotOnlyWhenNoStepIsLeft) {
  auto vouched = w_.offload("vouched");
  auto orphan = w_.offload("orphan");
  w_.run("e1", "bob", {json::object{{"n", 1}}});
  w_.snapshot("e1", "bob", vouched);     // e1's steps vouch for it: its snapshot does not count
  w_.snapshot("gone", "bob", orphan);    // no log left: the snapshot is the sole evidence
  w_.snapshot("mine", "alice", orphan);  // the subject's own snapshot never counts
  Ids candidates{addressOf(vouched), addressOf(orphan)};
  EXPECT_EQ(removeCitedByOthers(sources(), "alice", {"mine"}, candidates), 1);
  EXPECT_EQ(candidates, Ids{addressOf(vouched)});
}

TEST_F(ClaimCheckRefsTest, OtherExecutionsSkipAnArchivedCopyOfALogReadLive) {
  auto a = w_.offload("a");
  w_.run("e1", "bob", {a});
  sweep::ArchiveWriter writer(w_.dir.path() / "archive");  // retention wrote the segment, then died
  writer.add(*w_.events.info("e1"), w_.events.read("e1"));
  writer.finish();
  OtherExecutions others(sources(), "alice");
  Ids candidates{addressOf(a), std::string(64, 'c')};
  EXPECT_EQ(others.strikeTrustedRefs(candidates, 2), 1);
  EXPECT_EQ(candidates, Ids{std::string(64, 'c')});
}

// Logs read on several threads: the first envelope of an address still wins in id order.
TEST_F(ClaimCheckRefsTest, ParallelCollectionKeepsTheFirstEnvelopeInIdOrder) {
  std::string address = w_.content.put("shared");
  Ids ids;
  for (int i = 10; i < 40; ++i) {
    auto envelope = content::toJson(content::ClaimCheckEnvelope{address, i, std::nullopt, true});
    w_.run("e" + std::to_string(i), "alice", {envelope});
    ids.insert("e" + std::to_string(i));
  }
  auto refs = claimCheckRefsOfLogs(sources(), ids, 4);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs.begin()->second.size, 10);
}

TEST_F(ClaimCheckRefsTest, RemoveCitedByOthersFailsWhenTheLogsCannotBeListed) {
  w_.run("e1", "bob", {w_.offload("a")});
  testutil::CrashingEventStore unlisted(w_.events);
  unlisted.cannotList = true;
  CitationSources s{&unlisted, nullptr, nullptr};
  Ids candidates{std::string(64, 'b')};
  EXPECT_THROW(removeCitedByOthers(s, "alice", {}, candidates), FailedPreconditionError);
}

}  // namespace
}  // namespace loom::compliance
