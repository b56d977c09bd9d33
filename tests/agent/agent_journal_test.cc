// Model-input journaling: "full" and "delta" logs rebuild exactly the inputs the model was
// called with; delta logs grow linearly; the folded agent state has the documented shape.
#include "agent/transcript.h"
#include "loom/agent/agent_state.h"
#include "agent_fixture.h"
#include "loom/agent/model_input.h"
#include "loom/kernel/fold.h"
#include "loom/util/error.h"

namespace loom::testing {
namespace {

using kernel::ExecutionStatus;

class JournalModes : public AgentFixture {
 protected:
  std::map<std::string, json::array> runAndRebuild(agent::ModelInputMode mode,
                                                   const std::string& id, bool compaction) {
    agent::AgentOptions o;
    o.modelInput = mode;
    o.system = "You are a researcher.";
    if (compaction) o.compaction = agent::CompactionOptions{8'000, 1, ""};
    if (!scripted_) {
      setUpAgent(generatorScript(15), o);
    }
    options_.modelInput = mode;
    options_.compaction = o.compaction;
    workflows_ = {};
    agent::registerAgentWorkflow(workflows_, "research", options_);
    model_->requests.clear();
    auto r = runtime(store_)->start("research", json::value("summarize the reports"), {.id = id});
    EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
    return agent::rebuildModelInputs(store_.read(id), "research");
  }
};

TEST_F(JournalModes, FullAndDeltaRebuildTheSameInputsTheModelSaw) {
  for (bool compaction : {false, true}) {
    auto full = runAndRebuild(agent::ModelInputMode::kFull, compaction ? "fc" : "f", compaction);
    auto seenFull = model_->requests;
    auto delta = runAndRebuild(agent::ModelInputMode::kDelta, compaction ? "dc" : "d", compaction);
    auto seenDelta = model_->requests;
    ASSERT_EQ(full.size(), 16u);
    EXPECT_EQ(full, delta);
    for (const auto& [step, messages] : full) {
      EXPECT_EQ(messages, seenFull.at(step)) << step;
      EXPECT_EQ(messages, seenDelta.at(step)) << step;
    }
  }
}

// The state fold sizes the transcript without keeping it (TranscriptSizer): at every model
// step, with and without compaction (which fences the summary of tainted messages), its size
// is the size of the full rebuilt input.
TEST_F(JournalModes, TheTranscriptSizerAgreesWithTheRebuiltInputsAtEveryStep) {
  for (bool compaction : {false, true}) {
    for (auto mode : {agent::ModelInputMode::kFull, agent::ModelInputMode::kDelta}) {
      std::string id =
          std::string(compaction ? "c" : "n") + (mode == agent::ModelInputMode::kFull ? "f" : "d");
      runAndRebuild(mode, id, compaction);
      agent::ModelInputRebuilder rebuilder("research");
      agent::TranscriptSizer sizer("research");
      int steps = 0;
      for (const auto& e : store_.read(id)) {
        const json::array* input = rebuilder.apply(e);
        ASSERT_EQ(input != nullptr, sizer.apply(e));
        if (input == nullptr) continue;
        ++steps;
        EXPECT_EQ(sizer.bytes(), agent::transcriptBytes(*input)) << rebuilder.lastModelStep();
      }
      EXPECT_EQ(steps, 16) << id;
    }
  }
}

TEST_F(JournalModes, DeltaLogsAreMuchSmallerAndLinear) {
  auto bytesFor = [&](agent::ModelInputMode mode, int64_t turns, const std::string& id) {
    workflows_ = {};
    tasks_ = {};
    toolCalls_.clear();
    tools_.clear();
    agent::AgentOptions o;
    o.modelInput = mode;
    setUpAgent(generatorScript(turns), o);
    auto r = runtime(store_)->start("research", json::value("go"), {.id = id});
    EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
    return store_.info(id)->logBytes;
  };
  int64_t delta20 = bytesFor(agent::ModelInputMode::kDelta, 20, "d20");
  int64_t delta80 = bytesFor(agent::ModelInputMode::kDelta, 80, "d80");
  int64_t full80 = bytesFor(agent::ModelInputMode::kFull, 80, "f80");
  // Linear: four times the turns is about four times the log (outputs grow slightly by page).
  EXPECT_LT(static_cast<double>(delta80) / static_cast<double>(delta20), 4.6);
  EXPECT_GT(full80, 10 * delta80);  // quadratic against linear
}

TEST_F(JournalModes, AReferenceToAMissingStepIsDataLoss) {
  std::vector<kernel::Event> events{
      kernel::executionStarted("research", nullptr, {}, 0),
      kernel::stepCompleted("research#turn:1:model", "llm", "scripted",
                            json::value{{"role", "assistant"}}, 0)};
  events[1].data["input"] = json::value{
      {"since", nullptr}, {"appended", json::array{json::object{{"fromStep", "nope"}}}}};
  EXPECT_THROW(agent::rebuildModelInputs(events, "research"), DataLossError);
}

// Found by `loom sim`: a workflow step named like an agent's model turn, with an input of its
// own, made `loom export` fail with a bare "out of range"; it is now typed data loss naming
// the step.
TEST_F(JournalModes, AModelStepWhoseInputIsNotAnAgentsIsDataLossNamingIt) {
  std::vector<kernel::Event> events{
      kernel::executionStarted("research", nullptr, {}, 0),
      kernel::stepCompleted("research#turn:1:model", "llm", "think", json::object{}, 0)};
  events[1].data["input"] = json::object{{"turn", 1}};
  try {
    agent::foldAgentState(events, "research");
    FAIL() << "folded an input that is not a model input";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("research#turn:1:model"), std::string::npos) << e.what();
  }
}

TEST_F(AgentFixture, FoldedAgentStateHasFramesTurnsDecisionsAndSizes) {
  setUpAgent(generatorScript(3));
  auto r = runtime(store_)->start("research", json::value("go"), {.id = "s"});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  auto state = agent::foldAgentState(store_.read("s"), "research");
  ASSERT_EQ(state.at("frames").as_array().size(), 3u);
  const auto& frame = state.at("frames").as_array()[0].as_object();
  EXPECT_EQ(frame.at("stepId").as_string(), "research#turn:1:tool:0");
  EXPECT_EQ(frame.at("tool").as_string(), "fetch_report");
  EXPECT_EQ(frame.at("turn").as_int64(), 1);
  EXPECT_EQ(frame.at("meta").at("attempt").as_int64(), 1);
  EXPECT_EQ(frame.at("meta").at("outputBytes").as_int64(),
            static_cast<int64_t>(json::textBytes(frame.at("output"))));
  EXPECT_EQ(state.at("turnOutputs").as_array().size(), 4u);
  const auto& decisions = state.at("_decisions").as_array();
  EXPECT_EQ(decisions[0].at("decision").as_string(), "callTools");
  EXPECT_EQ(decisions[3].at("decision").as_string(), "answer");
  EXPECT_GT(state.at("transcriptBytes").as_int64(), 3 * 1500);
  EXPECT_TRUE(state.at("sawTaintFrom").as_array().empty());
  EXPECT_EQ(agent::agentLoopsOf(store_.read("s")), (std::vector<std::string>{"research"}));
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

TEST(AgentStateErased, SealedOrErasedStepsFoldToNothingInsteadOfThrowing) {
  std::vector<kernel::Event> events{
      kernel::executionStarted("research", nullptr, std::string("alice"), 0),
      kernel::stepCompleted("research#turn:1:model", "llm", "scripted",
                            json::value{{"role", "assistant"}}, 0)};
  events[1].data = json::object{{"erased", {{"subject", "alice"}}}};
  auto state = agent::foldAgentState(events, "research");
  EXPECT_TRUE(state.at("frames").as_array().empty());
  EXPECT_TRUE(agent::agentLoopsOf(events).empty());
  EXPECT_TRUE(agent::rebuildModelInputs(events, "research").empty());
  kernel::Fold fold;
  for (const auto& e : events) fold.apply(e);
  EXPECT_EQ(fold.state().at("erased").at("subject"), "alice");
}

}  // namespace
}  // namespace loom::testing
