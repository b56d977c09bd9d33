// The EventStore conformance suite, leases (lease.h, docs/spec/leases.md): one holder at a
// time, refusals that name the holder, expiry and takeover, heartbeats, fencing of appends by
// a runner whose lease is gone, growing tokens, and racing acquisitions. Time is the suite's
// ManualClock, which the store was made with.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "event_store_conformance.h"
#include "loom/util/error.h"

namespace loom::kernel::conformance {
namespace {

constexpr int64_t kTtl = 10'000;

LeaseOwner owner(const std::string& name, int64_t pid) {
  return LeaseOwner{name, "host-" + name, pid, "boot-1", "pid:[4026531836]", 1234 + pid};
}

LeaseRequest request(const std::string& id, const LeaseOwner& who, int64_t ttl = kTtl) {
  return LeaseRequest{id, who, ttl, std::nullopt};
}

const LeaseOwner kA = owner("a", 101);
const LeaseOwner kB = owner("b", 202);

TEST_P(EventStoreConformance, ALeaseKeepsEveryOtherRunnerOutAndNamesItsHolder) {
  int64_t t0 = clock().nowMillis();
  Lease a = store().acquireLease(request("e1", kA));
  EXPECT_EQ(a.executionId, "e1");
  EXPECT_EQ(a.owner.id, "a");
  EXPECT_GE(a.token, 1);
  EXPECT_EQ(a.acquiredAtMillis, t0);
  EXPECT_EQ(a.expiresAtMillis, t0 + kTtl);

  clock().advance(4'000);
  try {
    store().acquireLease(request("e1", kB));
    FAIL() << "a second runner got a live lease";
  } catch (const LeaseHeldError& e) {
    EXPECT_EQ(e.held().owner.id, "a");
    EXPECT_EQ(e.held().token, a.token);
    std::string m = e.what();
    EXPECT_NE(m.find("process 101 on host 'host-a'"), std::string::npos) << m;
    EXPECT_NE(m.find("expires in 6.0 s"), std::string::npos) << m;
    EXPECT_NE(m.find("nothing was run"), std::string::npos) << m;
  }
  EXPECT_THROW(store().acquireLease(request("e1", kA)), LeaseHeldError)
      << "held is held, for its own owner too";
  Lease other = store().acquireLease(request("e2", kB));
  EXPECT_EQ(other.owner.id, "b") << "leases are per execution";
}

TEST_P(EventStoreConformance, AnExpiredLeaseIsTakenOverWithAGreaterToken) {
  Lease a = store().acquireLease(request("e1", kA));
  clock().advance(kTtl);  // expiresAt == now: expired
  Lease b = store().acquireLease(request("e1", kB));
  EXPECT_GT(b.token, a.token);
  EXPECT_EQ(store().currentLease("e1")->owner.id, "b");
  EXPECT_THROW(store().renewLease(a, kTtl), LeaseLostError);
}

TEST_P(EventStoreConformance, AHeartbeatKeepsTheLeaseAlive) {
  Lease a = store().acquireLease(request("e1", kA));
  for (int i = 0; i < 5; ++i) {
    clock().advance(kTtl / 2);
    a = store().renewLease(a, kTtl);
    EXPECT_EQ(a.renewedAtMillis, clock().nowMillis());
    EXPECT_EQ(a.expiresAtMillis, clock().nowMillis() + kTtl);
  }
  EXPECT_THROW(store().acquireLease(request("e1", kB)), LeaseHeldError);
  auto seen = store().currentLease("e1");
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->renewedAtMillis, a.renewedAtMillis);
  EXPECT_EQ(seen->owner.pid, 101);
  EXPECT_EQ(seen->owner.host, "host-a");
  EXPECT_EQ(seen->owner.bootId, "boot-1");
  EXPECT_EQ(seen->owner.pidNamespace, "pid:[4026531836]");
  EXPECT_EQ(seen->owner.startTicks, 1335);
}

TEST_P(EventStoreConformance, AnAppendUnderALeaseTakenOverWritesNothing) {
  Lease a = store().acquireLease(request("e1", kA));
  EXPECT_EQ(store().appendLeased(a, 1, {started()}), 2);
  clock().advance(kTtl + 1);
  Lease b = store().acquireLease(request("e1", kB));
  try {
    store().appendLeased(a, 2, {step("s1")});
    FAIL() << "a runner whose lease was taken over appended";
  } catch (const LeaseLostError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("process 202 on host 'host-b' took it over"), std::string::npos) << m;
    EXPECT_NE(m.find("Nothing was written"), std::string::npos) << m;
  }
  EXPECT_EQ(store().info("e1")->nextSeq, 2) << "the refused append wrote something";
  EXPECT_EQ(store().appendLeased(b, 2, {step("s1")}), 3);
  EXPECT_EQ(store().read("e1").size(), 2u);
  // A writer that does not run the execution (a signal) appends without a lease.
  EXPECT_EQ(store().append("e1", 3, {signalReceived("go", json::value(1), kT0)}), 4);
}

TEST_P(EventStoreConformance, AnExpiredLeaseNobodyTookOverStillFencesForItsOwner) {
  Lease a = store().acquireLease(request("e1", kA));
  clock().advance(kTtl * 3);
  EXPECT_EQ(store().appendLeased(a, 1, {started()}), 2);
  a = store().renewLease(a, kTtl);
  EXPECT_TRUE(a.liveAt(clock().nowMillis()));
}

TEST_P(EventStoreConformance, AReleasedLeaseIsFreeAtOnceAndItsTokenIsNeverReused) {
  Lease a = store().acquireLease(request("e1", kA));
  store().releaseLease(a);
  auto seen = store().currentLease("e1");
  ASSERT_TRUE(seen.has_value());
  EXPECT_TRUE(seen->released);
  EXPECT_FALSE(seen->liveAt(clock().nowMillis()));
  EXPECT_THROW(store().appendLeased(a, 1, {started()}), LeaseLostError);
  EXPECT_THROW(store().renewLease(a, kTtl), LeaseLostError);

  Lease b = store().acquireLease(request("e1", kB));
  EXPECT_GT(b.token, a.token);
  store().releaseLease(a);  // a stale release changes nothing
  EXPECT_FALSE(store().currentLease("e1")->released);
  EXPECT_EQ(store().currentLease("e1")->owner.id, "b");
  store().releaseLease(b);
  Lease again = store().acquireLease(request("e1", kA));
  EXPECT_GT(again.token, b.token);
}

TEST_P(EventStoreConformance, ALeasedStartOfAnExistingExecutionIsAConflictAndWritesNothing) {
  Lease a = store().acquireLease(request("e1", kA));
  EXPECT_EQ(store().appendLeased(a, 1, {started("first")}), 2);
  EXPECT_THROW(store().appendLeased(a, 1, {started("second")}), ConflictError);
  EXPECT_EQ(store().read("e1").size(), 1u);
  EXPECT_EQ(store().info("e1")->workflow, "first");
  EXPECT_EQ(store().info("e1")->nextSeq, 2);
  // Unleased, as a submission would (the lease stays its runner's).
  EXPECT_THROW(store().append("e1", 1, {started("third")}), ConflictError);
  EXPECT_THROW(store().appendLeased(a, 1, {step("s0")}), ConflictError) << "a stale seq";
  EXPECT_EQ(store().appendLeased(a, 2, {step("s1")}), 3);
}

TEST_P(EventStoreConformance, ABreakTokenTakesOverOnlyTheHolderItNames) {
  Lease a = store().acquireLease(request("e1", kA));
  LeaseRequest breakA = request("e1", kB);
  breakA.breakToken = a.token;
  Lease b = store().acquireLease(breakA);
  EXPECT_GT(b.token, a.token);
  LeaseRequest stale = request("e1", owner("c", 303));
  stale.breakToken = a.token;  // a is not the holder any more
  EXPECT_THROW(store().acquireLease(stale), LeaseHeldError);
  EXPECT_EQ(store().currentLease("e1")->owner.id, "b");
}

TEST_P(EventStoreConformance, RemoveForgetsTheLeaseWithTheLog) {
  Lease a = store().acquireLease(request("e1", kA));
  store().appendLeased(a, 1, {started()});
  EXPECT_TRUE(store().remove("e1"));
  EXPECT_FALSE(store().currentLease("e1").has_value());
  EXPECT_THROW(store().appendLeased(a, 1, {started()}), LeaseLostError);
  EXPECT_FALSE(store().currentLease("never").has_value());
}

TEST_P(EventStoreConformance, ALeaseRequestWithoutOwnerOrTtlIsRefused) {
  EXPECT_THROW(store().acquireLease(request("e1", kA, 0)), InvalidArgumentError);
  EXPECT_THROW(store().acquireLease(request("e1", LeaseOwner{})), InvalidArgumentError);
  EXPECT_THROW(store().acquireLease(request("", kA)), InvalidArgumentError);
  EXPECT_FALSE(store().currentLease("e1").has_value()) << "a refused request wrote a lease";
}

TEST_P(EventStoreConformance, RacingAcquisitionsGrantOneLease) {
  for (int round = 0; round < 20; ++round) {
    std::string id = "race" + std::to_string(round);
    std::atomic<int> granted{0}, refused{0};
    std::vector<std::thread> runners;
    for (int i = 0; i < 6; ++i) {
      runners.emplace_back([&, i] {
        try {
          store().acquireLease(request(id, owner("r" + std::to_string(i), 1000 + i)));
          ++granted;
        } catch (const LeaseHeldError&) {
          ++refused;
        }
      });
    }
    for (auto& t : runners) t.join();
    EXPECT_EQ(granted.load(), 1) << "round " << round;
    EXPECT_EQ(refused.load(), 5) << "round " << round;
  }
}

std::vector<std::string> idsOf(const std::vector<Lease>& leases) {
  std::vector<std::string> ids;
  for (const auto& l : leases) ids.push_back(l.executionId);
  return ids;
}

EventStore::ClaimRequest claim(const LeaseOwner& who, std::size_t limit,
                               std::vector<std::string> skip = {}) {
  return EventStore::ClaimRequest{who, kTtl, limit, std::move(skip)};
}

TEST_P(EventStoreConformance, ClaimingTakesRunsNobodyRunsOldestFirstAndNeverOneTwice) {
  // submitted (no lease), held, released, expired, ended, and a second submitted one.
  for (auto [id, at] : {std::pair{"submitted", 3}, std::pair{"held", 1}, std::pair{"released", 2},
                        std::pair{"expired", 0}, std::pair{"ended", 0}, std::pair{"later", 9}}) {
    store().append(id, 1, {started("wf", std::nullopt, json::object{}, kT0 + at)});
  }
  store().append("ended", 2,
                 {Event{0, EventType::kExecutionCompleted, kT0, json::object{{"output", 1}}}});
  Lease expiring = store().acquireLease(request("expired", kA, 1'000));
  store().releaseLease(store().acquireLease(request("released", kA)));
  store().acquireLease(request("held", kA));
  clock().advance(1'000);  // "expired" is now

  std::vector<Lease> first = store().claimRunnable(claim(kB, 3, {"later"}));
  EXPECT_EQ(idsOf(first), (std::vector<std::string>{"expired", "released", "submitted"}))
      << "oldest first; held, ended and skipped ones are not runnable";
  for (const auto& l : first) {
    EXPECT_EQ(l.owner.id, "b");
    EXPECT_EQ(l.expiresAtMillis, clock().nowMillis() + kTtl);
    EXPECT_EQ(store().currentLease(l.executionId)->token, l.token);
  }
  EXPECT_GT(first[0].token, expiring.token) << "a claim is an acquisition: a greater token";
  EXPECT_THROW(store().renewLease(expiring, kTtl), LeaseLostError);
  EXPECT_EQ(idsOf(store().claimRunnable(claim(kA, 10))), (std::vector<std::string>{"later"}));
  EXPECT_TRUE(store().claimRunnable(claim(kA, 10)).empty()) << "everything is held now";
  EXPECT_TRUE(store().claimRunnable(claim(kA, 0)).empty());
}

// Workers of two code versions share a store (ADR 0029): a claim for one version takes the
// runs that recorded it or none, never another version's; the metadata says which is which.
TEST_P(EventStoreConformance, AClaimForACodeVersionTakesOnlyItsRunsAndRunsOfNone) {
  auto startedOn = [](std::optional<std::string> version, int64_t at) {
    Event e = started("wf", std::nullopt, json::object{}, kT0 + at);
    if (version) e.data["codeVersion"] = *version;
    return e;
  };
  store().append("old", 1, {startedOn("v1", 0)});
  store().append("new", 1, {startedOn("v2", 1)});
  store().append("none", 1, {startedOn(std::nullopt, 2)});
  EXPECT_EQ(store().info("old")->codeVersion, "v1");
  EXPECT_EQ(store().info("new")->codeVersion, "v2");
  EXPECT_FALSE(store().info("none")->codeVersion.has_value());
  for (const auto& info : store().list({})) {
    if (info.id == "new") {
      EXPECT_EQ(info.codeVersion, "v2") << "list() carries the version";
    }
  }

  EventStore::ClaimRequest onV2 = claim(kB, 10);
  onV2.codeVersion = "v2";
  EXPECT_EQ(idsOf(store().claimRunnable(onV2)), (std::vector<std::string>{"new", "none"}))
      << "a v2 worker took a v1 run, or left one of no version";
  EventStore::ClaimRequest onV3 = claim(kA, 10);
  onV3.codeVersion = "v3";
  EXPECT_TRUE(store().claimRunnable(onV3).empty()) << "nobody runs v3's runs: none is left";
  EXPECT_EQ(idsOf(store().claimRunnable(claim(kA, 10))), (std::vector<std::string>{"old"}))
      << "a claim of no version takes any";
}

TEST_P(EventStoreConformance, ConcurrentClaimersSplitTheRunsAndNeverShareOne) {
  constexpr int kRuns = 24;
  for (int i = 0; i < kRuns; ++i) store().append("r" + std::to_string(i), 1, {started()});
  std::mutex mu;
  std::vector<std::string> all;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      LeaseOwner me = owner("w" + std::to_string(w), 500 + w);
      for (;;) {
        std::vector<Lease> got = store().claimRunnable(claim(me, 2));
        if (got.empty()) return;
        std::lock_guard lock(mu);
        for (const auto& l : got) all.push_back(l.executionId);
      }
    });
  }
  for (auto& t : workers) t.join();
  std::set<std::string> unique(all.begin(), all.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kRuns)) << "a run was claimed twice";
  EXPECT_EQ(unique.size(), static_cast<std::size_t>(kRuns)) << "a run was never claimed";
}

// Erasure's owner-set check reads only the logs executionsThatMayCite names: a store that
// names any must name every log whose stored form holds a wanted address.
TEST_P(EventStoreConformance, ExecutionsThatMayCiteNeverLeaveOutALogHoldingTheAddress) {
  const std::string a(64, 'a'), b(64, 'b');
  store().append("cites", 1, {started(), step("s1", json::object{{"ref", a}})});
  store().append("quiet", 1, {started(), step("s1", json::value("nothing here"))});
  store().append("alice", 1, {started("wf", "alice"), step("s1", json::object{{"ref", b}})});
  auto may = store().executionsThatMayCite({a, b});
  if (!may) return;  // the store cannot tell: erasure reads every log
  EXPECT_TRUE(may->contains("cites"));
  EXPECT_TRUE(may->contains("alice")) << "a log holding the address (sealed or not) was left out";
}

}  // namespace
}  // namespace loom::kernel::conformance
