// ADR 0140 D6: replay makes zero content-store calls; retained blobs survive the sweep,
// reclaimable ones are TTL-reclaimed and then resolve to null; replay is unaffected.
#include "loom/middleware/retry.h"
#include "loom/sweep/sweep.h"
#include "opt_in_fixture.h"
#include "support/faulty_content_store.h"

namespace loom::testing {
namespace {

using kernel::ExecutionStatus;

TEST_F(OptInFixture, D6_ResumingA200TurnParkedRunMakesZeroContentStoreCalls) {
  // 200 turns of fetch_report, then the final tool needs approval: the run parks.
  json::array t;
  for (int i = 1; i <= 200; ++i) {
    t.push_back(json::object{{"toolCalls", json::array{call("fetch_report", {{"page", i}})}}});
  }
  t.push_back(json::object{{"toolCalls", json::array{call("publish")}}});
  t.push_back(json::object{{"answer", "done"}});
  registerAgent(json::value{{"turns", std::move(t)}}, 250);
  // Without snapshots the resume replays every recorded turn from the log; with them (the
  // default) it starts at the park's checkpoint and replays one step. Neither reads a blob.
  for (int64_t every : {0, 1000}) {
    SCOPED_TRACE("execution.snapshotEveryEvents = " + std::to_string(every));
    std::string id = "long-" + std::to_string(every);
    auto c = baseConfig();
    c.execution.claimCheck = claimCheck({"fetch_report"});
    c.execution.snapshotEveryEvents = every;
    counting_->reset();
    {
      auto a = boot(c);
      auto r = a->runtime().start("research", json::value("go"), {.id = id});
      ASSERT_EQ(r.status, ExecutionStatus::kParked);
    }
    EXPECT_EQ(counting_->count("put"), 200);
    counting_->reset();
    int modelCalls = model_->calls, toolCalls = calls_["fetch_report"];
    // A fresh app: replay, approve, finish.
    auto a = boot(c);
    auto parked = a->runtime().resume(id);
    EXPECT_EQ(parked.status, ExecutionStatus::kParked);
    EXPECT_EQ(parked.replayedSteps, every == 0 ? 401 : 1);
    EXPECT_EQ(parked.effectsRun, 0);
    EXPECT_EQ(counting_->total(), 0) << "replay makes zero content-store calls";
    auto done = a->runtime().signal(id, "approve:research#turn:201:tool:0",
                                    json::value{{"approved", true}});
    EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
    EXPECT_EQ(counting_->total(), 0);
    EXPECT_EQ(model_->calls, modelCalls + 1) << "only the turn after the approval";
    EXPECT_EQ(calls_["fetch_report"], toolCalls) << "no recorded tool re-ran";
  }
  EXPECT_EQ(calls_["publish"], 2);
}

sweep::SweepReport sweepNow(app::App& a, content::ContentStore& store,
                            std::shared_ptr<ManualClock> clock) {
  sweep::SweepOptions o;
  o.clock = clock;
  o.ttlMillis = 24LL * 3600 * 1000;
  o.graceMillis = 3600LL * 1000;
  return sweep::sweepUnpinnedContent(store, sweep::SweepSources{&a.store(), {}}, o);
}

TEST_F(OptInFixture, D6_RetainedBlobsOutliveTheTtlReclaimableOnesDoNot) {
  registerAgent(turns({call("fetch_report", {{"page", 1}}), call("untrusted")}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"fetch_report", "untrusted"});
  c.execution.claimCheck->reclaimable = {"untrusted"};
  auto a = boot(c);
  a->runtime().start("research", json::value("go"), {.id = "d6"});
  json::value retained = output(*a, "d6", "research#turn:1:tool:0");
  json::value telemetry = output(*a, "d6", "research#turn:2:tool:0");
  EXPECT_TRUE(content::parseEnvelope(retained)->retain);
  EXPECT_FALSE(content::parseEnvelope(effects::untainted(telemetry))->retain);
  clock_->advance(10LL * 365 * 24 * 3600 * 1000);
  auto report = sweepNow(*a, inner_, clock_);
  EXPECT_EQ(report.keptByReason["loadBearing"], 1);
  EXPECT_EQ(report.deleted, 1);
  EXPECT_TRUE(middleware::resolveClaimCheck(inner_, retained));
  EXPECT_FALSE(middleware::resolveClaimCheck(inner_, telemetry)) << "reclaimed: resolves to null";
  // Replay is unaffected either way.
  int before = calls_["untrusted"];
  auto again = boot(c)->runtime().resume("d6");
  EXPECT_EQ(again.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(calls_["untrusted"], before);
}

// A result the content store cannot take (full disk, I/O error) is not the tool's failure:
// nothing is recorded, the run parks, a retry layer does not run the tool again, and resume
// completes once the store takes writes, running only the unstored call again.
TEST_F(OptInFixture, AResultTheStoreCannotTakeParksTheRunAndNothingIsRecorded) {
  registerAgent(turns({call("fetch_report", {{"page", 1}}), call("fetch_report", {{"page", 2}}),
                       call("fetch_report", {{"page", 3}})}));
  auto faulty = std::make_shared<content::FaultyContentStore>(inner_);
  auto c = baseConfig();
  c.storage.contentStore.instance = faulty;
  c.execution.claimCheck = claimCheck({"fetch_report"});
  c.execution.effectMiddleware = {
      std::make_shared<middleware::RetryMiddleware>(middleware::RetryConfig{
          .attempts = 3, .initialDelayMs = 0, .jitter = 0, .retryOn = {ErrorCode::kUnavailable}})};
  faulty->failFrom(content::ContentCall::kPut, 2);  // the second result finds the store full
  auto a = boot(c);
  auto parked = a->runtime().start("research", json::value("go"), {.id = "full"});
  ASSERT_EQ(parked.status, ExecutionStatus::kParked);
  EXPECT_EQ(parked.parkReason, "contentStoreUnavailable");
  EXPECT_NE(parked.parkDetail.find("research#turn:2:tool:0"), std::string::npos)
      << parked.parkDetail;
  EXPECT_EQ(calls_["fetch_report"], 2) << "the retry layer did not run the tool again";
  for (const auto& e : a->store().read("full")) {
    EXPECT_NE(e.type, kernel::EventType::kStepFailed) << kernel::toText(e);
  }
  faulty->failFrom(content::ContentCall::kPut, 0);  // room again
  auto done = a->runtime().resume("full");
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(calls_["fetch_report"], 4) << "three pages, one of them twice";
}

}  // namespace
}  // namespace loom::testing
