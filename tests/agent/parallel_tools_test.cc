// Parallel tool calls (agent.parallelToolCalls): the calls of one model turn run at once, are
// journaled in call order, replay identically, and a crash re-runs at most the calls that
// were not journaled; an approval still parks per call.
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "agent_fixture.h"
#include "loom/effects/middleware.h"
#include "loom/util/error.h"

namespace loom::testing {
namespace {

using kernel::ExecutionStatus;

// A tool whose calls each wait (up to `patience`) until `width` calls are running at once: it
// answers "together" when they were, "alone" when it gave up waiting.
class Rendezvous {
 public:
  explicit Rendezvous(int width, std::chrono::milliseconds patience = std::chrono::seconds(5))
      : width_(width), patience_(patience) {}
  json::value call(const json::value& args) {
    std::unique_lock lock(mu_);
    ++ran_;
    bool together = ++running_ >= width_;
    cv_.notify_all();
    if (!together) {
      together = cv_.wait_for(lock, patience_, [&] { return running_ >= width_; });
    }
    return json::value{{"page", args.at("page")}, {"met", together ? "together" : "alone"}};
  }
  int ran() {
    std::lock_guard lock(mu_);
    return ran_;
  }

 private:
  int width_;
  std::chrono::milliseconds patience_;
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0;  // never decremented: the calls of one turn only meet once
  int ran_ = 0;
};

json::value fourCallsThenAnswer() {
  json::array calls;
  for (int p = 1; p <= 4; ++p) {
    calls.push_back(json::object{{"name", "meet"}, {"arguments", {{"page", p}}}});
  }
  return json::value{
      {"turns", json::array{json::object{{"toolCalls", calls}}, json::object{{"answer", "done"}}}}};
}

TEST_F(AgentFixture, ToolCallsOfOneTurnRunAtOnceAndAreJournaledInCallOrder) {
  auto meet = std::make_shared<Rendezvous>(4);
  addTool("meet", [meet](const json::value& a) { return meet->call(a); });
  setUpAgent(fourCallsThenAnswer());  // parallelToolCalls defaults to 4
  auto r = runtime(store_)->start("research", json::value("go"), {.id = "p"});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  std::vector<std::string> ids = stepIds("p");
  ASSERT_EQ(ids.size(), 6u);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(ids[1 + j], "research#turn:1:tool:" + std::to_string(j) + "|tool|meet");
  }
  const auto& input = model_->requests.at("research#turn:2:model");
  for (int j = 0; j < 4; ++j) {
    const auto& m = input[input.size() - 4 + j];
    EXPECT_EQ(m.at("toolCallId").as_string(), "call_1_" + std::to_string(j));  // call order
    EXPECT_EQ(m.at("content").at("page"), j + 1);
    EXPECT_EQ(m.at("content").at("met"), "together") << "call " << j << " ran alone";
  }
  // A resume of the ended run replays the same transcript and runs nothing.
  model_->requests.clear();
  auto again = runtime(store_)->resume("p");
  EXPECT_EQ(again.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(meet->ran(), 4);
}

TEST_F(AgentFixture, WithParallelToolCallsOneTheCallsRunOneAfterAnother) {
  auto meet = std::make_shared<Rendezvous>(2, std::chrono::milliseconds(300));
  addTool("meet", [meet](const json::value& a) { return meet->call(a); });
  agent::AgentOptions o;
  o.parallelToolCalls = 1;
  json::value script{
      {"turns",
       json::array{json::object{
                       {"toolCalls",
                        json::array{json::object{{"name", "meet"}, {"arguments", {{"page", 1}}}},
                                    json::object{{"name", "meet"}, {"arguments", {{"page", 2}}}}}}},
                   json::object{{"answer", "done"}}}}};
  setUpAgent(script, o);
  auto r = runtime(store_)->start("research", json::value("go"), {.id = "s"});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  const auto& input = model_->requests.at("research#turn:2:model");
  EXPECT_EQ(input[input.size() - 2].at("content").at("met"), "alone");
}

// The store dies at the append of the second tool result: the first is journaled, the other
// three ran but were not; the resume re-runs only those (at most the calls in flight) and ends
// with the same transcript a run without the crash has.
TEST_F(AgentFixture, ACrashDuringParallelCallsRerunsAtMostTheCallsNotJournaled) {
  std::atomic<int> runs{0};
  addTool("meet", [&runs](const json::value& a) {
    ++runs;
    return json::value{{"page", a.at("page")}};
  });
  setUpAgent(fourCallsThenAnswer());
  FaultyEventStore faulty(store_);
  faulty.failFromAppend(4);  // started, turn 1's model step, tool 0, then tool 1 fails
  EXPECT_THROW(runtime(faulty)->start("research", json::value("go"), {.id = "c"}),
               UnavailableError);
  int recorded = static_cast<int>(stepIds("c").size()) - 1;  // minus the model step
  EXPECT_EQ(recorded, 1);
  int before = runs.load();
  EXPECT_LE(before - recorded, 4) << "at most the calls in flight ran unrecorded";
  auto r = runtime(store_)->resume("c");
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(runs.load() - before, 3) << "only the three calls not journaled ran again";
  const auto& input = model_->requests.at("research#turn:2:model");
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(input[input.size() - 4 + j].at("content").at("page"), j + 1);
  }
}

// [read, send (needs approval), read]: the first read runs and is journaled, the run parks at
// the approval; after it, the send and the last read run.
TEST_F(AgentFixture, AnApprovalAmongParallelCallsParksAfterTheCallsBeforeIt) {
  addTool("read", [this](const json::value& a) {
    countCall("read");
    return json::value{{"page", a.at("page")}};
  });
  addTool(
      "send",
      [this](const json::value&) {
        countCall("send");
        return json::value("sent");
      },
      /*requiresApproval=*/true);
  json::array calls{json::object{{"name", "read"}, {"arguments", {{"page", 1}}}},
                    json::object{{"name", "send"}},
                    json::object{{"name", "read"}, {"arguments", {{"page", 2}}}}};
  setUpAgent(json::value{
      {"turns", json::array{json::object{{"toolCalls", calls}}, json::object{{"answer", "ok"}}}}});
  auto r = runtime(store_)->start("research", json::value("go"), {.id = "ap"});
  ASSERT_EQ(r.status, ExecutionStatus::kParked);
  EXPECT_EQ(r.waitingFor, "approve:research#turn:1:tool:1");
  EXPECT_EQ(toolCalls_["read"], 1);
  EXPECT_EQ(toolCalls_["send"], 0);
  r = runtime(store_)->signal("ap", "approve:research#turn:1:tool:1",
                              json::value{{"approved", true}});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(toolCalls_["read"], 2);
  EXPECT_EQ(toolCalls_["send"], 1);
}

// Stops (as the kill switch does) every call of one effect while `stopped` is set.
class StopOne : public effects::Middleware {
 public:
  StopOne(std::string effectId, std::atomic<bool>& stopped)
      : effectId_(std::move(effectId)), stopped_(stopped) {}
  std::string_view name() const override { return "stopOne"; }
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override {
    if (ctx.effectId == effectId_ && stopped_) throw Error(ErrorCode::kStopped, "stopped");
    return next(ctx, std::move(input));
  }

 private:
  std::string effectId_;
  std::atomic<bool>& stopped_;
};

// [send (stopped), charge, post]: the run parks for the stopped call, but the two calls that
// ran beside it are journaled, so the resume after the stop is lifted runs only `send`; the
// card is charged once.
TEST_F(AgentFixture, AParkInAParallelBatchKeepsTheCallsThatRanBesideIt) {
  for (const char* name : {"send", "charge", "post"}) {
    addTool(name, [this, name](const json::value&) {
      countCall(name);
      return json::value(name);
    });
  }
  json::array calls{json::object{{"name", "send"}}, json::object{{"name", "charge"}},
                    json::object{{"name", "post"}}};
  setUpAgent(json::value{
      {"turns", json::array{json::object{{"toolCalls", calls}}, json::object{{"answer", "ok"}}}}});
  std::atomic<bool> stopped{true};
  auto chain = std::make_shared<const effects::EffectChain>(
      std::vector<std::shared_ptr<effects::Middleware>>{
          std::make_shared<StopOne>("send", stopped)});
  workflow::RuntimeOptions ro;
  ro.clock = clock_;
  workflow::WorkflowRuntime rt(store_, workflows_, tasks_, chain, ro);
  auto r = rt.start("research", json::value("go"), {.id = "k"});
  ASSERT_EQ(r.status, ExecutionStatus::kParked);
  EXPECT_EQ(r.parkReason, "effectStopped");
  EXPECT_EQ(toolCalls_["send"], 0);
  int ranBeside = toolCalls_["charge"] + toolCalls_["post"];
  std::vector<std::string> ids = stepIds("k");
  EXPECT_EQ(static_cast<int>(ids.size()) - 1, ranBeside) << "every call that ran is journaled";
  stopped = false;
  r = rt.resume("k");
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(toolCalls_["send"], 1);
  EXPECT_EQ(toolCalls_["charge"], 1) << "the card was charged twice";
  EXPECT_EQ(toolCalls_["post"], 1);
}

}  // namespace
}  // namespace loom::testing
