// The EventStore conformance suite, part 2: execution metadata. info() and list() with every
// filter field, pagination and ordering; status transitions; log and state sizes, which must
// equal what the log's texts and its fold measure, byte for byte.
#include "event_store_conformance.h"
#include "loom/kernel/fold.h"

namespace loom::kernel::conformance {
namespace {

std::vector<std::string> ids(const std::vector<ExecutionInfo>& infos) {
  std::vector<std::string> out;
  for (const auto& i : infos) out.push_back(i.id);
  return out;
}

using Ids = std::vector<std::string>;

// Asserts every size the metadata keeps against the log itself.
void expectSizesMatchLog(EventStore& store, const std::string& id) {
  auto events = store.read(id);
  auto info = store.info(id);
  ASSERT_TRUE(info);
  int64_t logBytes = 0;
  int64_t steps = 0;
  for (const auto& e : events) {
    logBytes += static_cast<int64_t>(toText(e).size());
    if (e.type == EventType::kStepCompleted) ++steps;
  }
  EXPECT_EQ(logBytes, info->logBytes) << id;
  EXPECT_EQ(steps, info->steps) << id;
  EXPECT_EQ(static_cast<int64_t>(json::textBytes(foldEvents(events))), info->stateBytes)
      << id << " after seq " << events.size() << ": " << json::toText(foldEvents(events));
  EXPECT_EQ(static_cast<int64_t>(events.size()) + 1, info->nextSeq) << id;
}

TEST_P(EventStoreConformance, InfoOfAnUnknownExecutionIsAbsent) {
  EXPECT_FALSE(store().info("nope"));
  store().append("e1", 1, {started()});
  EXPECT_FALSE(store().info("e"));
  EXPECT_FALSE(store().info("e10"));
}

TEST_P(EventStoreConformance, InfoDescribesTheExecution) {
  store().append("e1", 1, {started("research", "alice", json::object{{"q", 1}}, kT0 + 7)});
  auto info = store().info("e1");
  ASSERT_TRUE(info);
  EXPECT_EQ("e1", info->id);
  EXPECT_EQ("research", info->workflow);
  EXPECT_EQ(std::optional<std::string>("alice"), info->subject);
  EXPECT_EQ(ExecutionStatus::kRunning, info->status);
  EXPECT_EQ(kT0 + 7, info->startedAtMillis);
  EXPECT_FALSE(info->endedAtMillis);
  EXPECT_EQ(2, info->nextSeq);
  EXPECT_EQ(0, info->steps);

  store().append("e2", 1, {started("research")});
  EXPECT_FALSE(store().info("e2")->subject);
}

TEST_P(EventStoreConformance, StatusFollowsTheLog) {
  auto status = [&](const std::string& id) { return store().info(id)->status; };
  store().append("ok", 1, {started()});
  EXPECT_EQ(ExecutionStatus::kRunning, status("ok"));
  store().append("ok", 2, {executionParked("signal", "approve", "", kT0 + 1)});
  EXPECT_EQ(ExecutionStatus::kParked, status("ok"));
  // A signal runs nothing by itself: the execution stays parked until a step runs.
  store().append("ok", 3, {signalReceived("approve", true, kT0 + 2)});
  EXPECT_EQ(ExecutionStatus::kParked, status("ok"));
  store().append("ok", 4, {step("a", 1, kT0 + 3)});
  EXPECT_EQ(ExecutionStatus::kRunning, status("ok"));
  store().append("ok", 5, {signalReceived("late", 2, kT0 + 4)});
  EXPECT_EQ(ExecutionStatus::kRunning, status("ok"));
  store().append("ok", 6, {executionParked("process ended", "", "", kT0 + 5)});
  store().append("ok", 7, {stepFailed("b", "tool", "t", "unavailable", "down", true, kT0 + 6)});
  EXPECT_EQ(ExecutionStatus::kRunning, status("ok"));
  EXPECT_FALSE(store().info("ok")->endedAtMillis);
  store().append("ok", 8, {executionCompleted("done", kT0 + 50)});
  EXPECT_EQ(ExecutionStatus::kCompleted, status("ok"));
  EXPECT_EQ(std::optional<int64_t>(kT0 + 50), store().info("ok")->endedAtMillis);

  store().append("bad", 1, {started(), executionFailed("internal", "boom", kT0 + 60)});
  EXPECT_EQ(ExecutionStatus::kFailed, status("bad"));
  EXPECT_EQ(std::optional<int64_t>(kT0 + 60), store().info("bad")->endedAtMillis);

  store().append("stop", 1, {started(), executionCancelled("no longer needed", kT0 + 70)});
  EXPECT_EQ(ExecutionStatus::kCancelled, status("stop"));
  EXPECT_EQ(std::optional<int64_t>(kT0 + 70), store().info("stop")->endedAtMillis);
  ExecutionFilter cancelled;
  cancelled.status = ExecutionStatus::kCancelled;
  ASSERT_EQ(store().list(cancelled).size(), 1u);
  EXPECT_EQ(store().list(cancelled)[0].id, "stop");
}

TEST_P(EventStoreConformance, ListFiltersByEachFieldOrderedById) {
  store().append("b-1", 1, {started("alpha", "alice")});
  store().append("a-2", 1, {started("beta"), executionCompleted(1, kT0 + 100)});
  store().append("c-3", 1, {started("alpha", "bob"), executionFailed("x", "y", kT0 + 200)});
  store().append("d-4", 1, {started("alpha", "alice"), executionParked("wait", "", "", kT0)});
  store().append("e-5", 1, {started("beta", "alice"), executionCompleted(2, kT0 + 300)});

  EXPECT_EQ((Ids{"a-2", "b-1", "c-3", "d-4", "e-5"}), ids(store().list({})));
  ExecutionFilter f;
  f.workflow = "alpha";
  EXPECT_EQ((Ids{"b-1", "c-3", "d-4"}), ids(store().list(f)));
  f.subject = "alice";
  EXPECT_EQ((Ids{"b-1", "d-4"}), ids(store().list(f)));
  f = {};
  f.subject = "alice";
  EXPECT_EQ((Ids{"b-1", "d-4", "e-5"}), ids(store().list(f)));
  f.subject = "nobody";
  EXPECT_TRUE(store().list(f).empty());
  f = {};
  f.status = ExecutionStatus::kCompleted;
  EXPECT_EQ((Ids{"a-2", "e-5"}), ids(store().list(f)));
  f.status = ExecutionStatus::kParked;
  EXPECT_EQ((Ids{"d-4"}), ids(store().list(f)));
  f.status = ExecutionStatus::kRunning;
  EXPECT_EQ((Ids{"b-1"}), ids(store().list(f)));
  f.status = ExecutionStatus::kFailed;
  EXPECT_EQ((Ids{"c-3"}), ids(store().list(f)));
  f = {};
  f.endedBeforeMillis = kT0 + 200;  // strictly before
  EXPECT_EQ((Ids{"a-2"}), ids(store().list(f)));
  f.endedBeforeMillis = kT0 + 301;
  EXPECT_EQ((Ids{"a-2", "c-3", "e-5"}), ids(store().list(f)));
  f.workflow = "beta";
  EXPECT_EQ((Ids{"a-2", "e-5"}), ids(store().list(f)));

  for (const auto& info : store().list({})) {
    auto one = store().info(info.id);
    ASSERT_TRUE(one);
    EXPECT_EQ(one->status, info.status);
    EXPECT_EQ(one->subject, info.subject);
    EXPECT_EQ(one->endedAtMillis, info.endedAtMillis);
    EXPECT_EQ(one->logBytes, info.logBytes);
    EXPECT_EQ(one->stateBytes, info.stateBytes);
    EXPECT_EQ(one->nextSeq, info.nextSeq);
  }
}

TEST_P(EventStoreConformance, ListPaginatesWithAfterIdAndLimit) {
  for (const char* id : {"e3", "e1", "e5", "e2", "e4"}) store().append(id, 1, {started()});
  ExecutionFilter f;
  f.limit = 2;
  EXPECT_EQ((Ids{"e1", "e2"}), ids(store().list(f)));
  f.afterId = "e2";
  EXPECT_EQ((Ids{"e3", "e4"}), ids(store().list(f)));
  f.afterId = "e4";
  EXPECT_EQ((Ids{"e5"}), ids(store().list(f)));
  f.afterId = "e5";
  EXPECT_TRUE(store().list(f).empty());
  f.afterId = "e0";  // need not exist
  f.limit = 0;
  EXPECT_EQ(5u, store().list(f).size());
  // Limit counts matches, not rows looked at.
  store().append("e6", 1, {started("other")});
  store().append("e7", 1, {started()});
  f = {};
  f.workflow = "wf";
  f.afterId = "e4";
  f.limit = 2;
  EXPECT_EQ((Ids{"e5", "e7"}), ids(store().list(f)));
}

TEST_P(EventStoreConformance, ListOrdersIdsBytewise) {
  for (const char* id : {"b", "B", "a", "\xc3\xa9t\xc3\xa9", "a-1", "A"}) {
    store().append(id, 1, {started()});
  }
  EXPECT_EQ((Ids{"A", "B", "a", "a-1", "b", "\xc3\xa9t\xc3\xa9"}), ids(store().list({})));
}

TEST_P(EventStoreConformance, LogAndStateSizesMatchTheLogExactly) {
  if (GetParam().storesAnotherForm) GTEST_SKIP() << "its sizes are of the stored (sealed) form";
  // A varied log, appended one event at a time and checked after each.
  const std::vector<Event> log{
      started("agent", "ünïcødé 用户", json::object{{"q", "naïve — 日本語 🚀"}, {"n", 3}}),
      step("a", json::object{{"x", 1}, {"quote", "\"q\"\n\t\\"}}, kT0 + 1),
      stepFailed("b", "tool", "fetch", "unavailable", "timeout ⏱", true, kT0 + 2),
      step("b", "text ✓", kT0 + 3),
      executionParked("signal", "approve", "b", kT0 + 4),
      signalReceived("approve", json::object{{"ok", true}, {"by", "Zoë"}}, kT0 + 5),
      signalReceived("note", nullptr, kT0 + 6),
      step("research#turn:1:tool:0", json::array{1, 2.5, "three", nullptr}, kT0 + 7),
      executionParked("process ended", "", "", kT0 + 8),
      step("c", json::object{}, kT0 + 9),
      executionCompleted(json::object{{"answer", "42 ✔"}}, kT0 + 10),
  };
  for (std::size_t i = 0; i < log.size(); ++i) {
    store().append("varied", static_cast<int64_t>(i) + 1, {log[i]});
    expectSizesMatchLog(store(), "varied");
  }

  // Batched, no subject, ending in failure.
  store().append("failed", 1,
                 {started("plain"), step("only", "x"), signalReceived("s", 1, kT0),
                  executionFailed("internal", "bröken", kT0 + 1)});
  expectSizesMatchLog(store(), "failed");

  // Started only, and started-then-parked with no steps.
  store().append("fresh", 1, {started("w", std::nullopt, nullptr)});
  expectSizesMatchLog(store(), "fresh");
  store().append("parked", 1, {started(), executionParked("wait", "", "", kT0)});
  expectSizesMatchLog(store(), "parked");
  store().append(
      "cancelled", 1,
      {started(), step("a"), signalReceived("loom:cancel", json::object{{"reason", "x"}}, kT0),
       executionCancelled("stopped by Zoë ✋", kT0 + 1)});
  expectSizesMatchLog(store(), "cancelled");
  Event nullSubject = started();
  nullSubject.data["subject"] = nullptr;
  store().append("null-subject", 1, {nullSubject, step("a")});
  expectSizesMatchLog(store(), "null-subject");
  EXPECT_FALSE(store().info("null-subject")->subject);
}

}  // namespace
}  // namespace loom::kernel::conformance

namespace loom::kernel::conformance {
namespace {

Event modelStep(const std::string& stepId, json::object usage, int64_t at) {
  Event e = step(stepId, json::object{{"role", "assistant"}, {"content", "ok"}}, at);
  e.data["taskKind"] = "llm";
  e.data["usage"] = std::move(usage);
  return e;
}

// A model step's usage adds up in the metadata (a sealed step keeps it clear), list() too; a
// step without usage adds nothing; a malformed one is refused with nothing written.
TEST_P(EventStoreConformance, ModelStepsUsageAddsUpInTheMetadata) {
  store().append("e1", 1, {started()});
  store().append("e1", 2,
                 {modelStep("m1",
                            {{"model", "openai:gpt-4o"}, {"inputTokens", 1000},
                             {"outputTokens", 200}, {"cachedInputTokens", 400},
                             {"costUsd", 0.004}},
                            kT0 + 1),
                  step("tool"),
                  modelStep("m2", {{"model", "scripted"}, {"inputTokens", 30}, {"outputTokens", 5}},
                            kT0 + 2)});
  TokenUsage expected{1030, 205, 400, 4'000'000, 2};
  EXPECT_EQ(store().info("e1")->usage, expected);
  for (const auto& info : store().list({})) EXPECT_EQ(info.usage, expected) << "list()";

  for (json::object bad : {json::object{{"model", "m"}, {"inputTokens", -1}, {"outputTokens", 0}},
                           json::object{{"inputTokens", 1}, {"outputTokens", 1}},
                           json::object{{"model", "m"}, {"inputTokens", 1}, {"outputTokens", 1},
                                        {"cachedInputTokens", 2}}}) {
    EXPECT_THROW(store().append("e1", 5, {modelStep("bad", bad, kT0 + 3)}), InvalidArgumentError)
        << json::toText(bad);
  }
  EXPECT_EQ(store().info("e1")->nextSeq, 5) << "a refused usage wrote something";
  EXPECT_EQ(store().info("e1")->usage, expected);
}

}  // namespace
}  // namespace loom::kernel::conformance
