// The agent loop's checkpoints (docs/spec/snapshots.md, "Checkpoints"): a resume from a
// snapshot starts the loop at its last turn instead of replaying every turn, the transcript a
// resumed loop sends the model is exactly the one an uninterrupted run sends, snapshots stay
// small however long the run, and a checkpoint that does not read or does not match the log
// sends the runtime back to the whole log.
#include "agent_fixture.h"
#include "loom/kernel/memory_snapshot_store.h"

namespace loom::testing {
namespace {

using kernel::ExecutionStatus;

constexpr int kTurns = 40;  // the run parks for approval at this turn

// Turns 1..kTurns-1 fetch a page each; turn 3 also calls a tool that does not exist and turn 5
// an approval-gated one (denied); turn kTurns calls the approval-gated tool again (approved),
// then the model answers.
json::value script() {
  json::array turns;
  for (int t = 1; t < kTurns; ++t) {
    json::array calls{json::object{{"name", "fetch_report"}, {"arguments", {{"page", t}}}}};
    if (t == 3) calls.push_back(json::object{{"name", "no_such_tool"}});
    if (t == 5) calls.push_back(json::object{{"name", "send_email"}});
    turns.push_back(json::object{{"toolCalls", calls}});
  }
  turns.push_back(json::object{{"toolCalls", json::array{json::object{{"name", "send_email"}}}}});
  turns.push_back(json::object{{"answer", "all done"}});
  return json::value{{"turns", std::move(turns)}};
}

std::string approval(int turn, int call) {
  return "approve:research#turn:" + std::to_string(turn) + ":tool:" + std::to_string(call);
}

class AgentCheckpoint : public AgentFixture,
                        public ::testing::WithParamInterface<agent::ModelInputMode> {
 protected:
  void setUp(std::optional<agent::CompactionOptions> compaction = std::nullopt,
             std::string system = "") {
    addTool(
        "send_email",
        [this](const json::value&) {
          countCall("send_email");
          return json::value("sent");
        },
        /*requiresApproval=*/true);
    agent::AgentOptions o;
    o.modelInput = GetParam();
    o.compaction = compaction;
    o.system = std::move(system);
    setUpAgent(script(), o);
  }

  // A runtime over `store` that writes snapshots when a run parks and every `every` events.
  std::unique_ptr<workflow::WorkflowRuntime> snapshotting(kernel::EventStore& store,
                                                          int64_t every = 1'000'000) {
    workflow::RuntimeOptions o = runtimeOptions_;
    o.clock = clock_;
    o.retry = retry_;
    o.snapshots = &snapshots_;
    o.snapshotEveryEvents = every;
    o.onWarn = [this](std::string_view m) { warnings_.emplace_back(m); };
    return std::make_unique<workflow::WorkflowRuntime>(store, workflows_, tasks_, nullptr, o);
  }

  // The requests of an uninterrupted run without snapshots, by model step id.
  std::map<std::string, json::array> reference() {
    kernel::MemoryEventStore plain;
    auto rt = runtime(plain);
    auto r = rt->start("research", json::value("go"), {.id = "ref"});
    EXPECT_EQ(r.status, ExecutionStatus::kParked);
    rt->signal("ref", approval(5, 1), json::value{{"approved", false}});
    r = rt->signal("ref", approval(kTurns, 0), json::value{{"approved", true}});
    EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
    auto requests = model_->requests;
    model_->requests.clear();
    return requests;
  }

  // Runs "cp" with snapshots up to its park at turn kTurns.
  void runToTheLastPark(int64_t every = 1'000'000) {
    auto r = snapshotting(store_, every)->start("research", json::value("go"), {.id = "cp"});
    ASSERT_EQ(r.status, ExecutionStatus::kParked);
    r = snapshotting(store_, every)->signal("cp", approval(5, 1), json::value{{"approved", false}});
    ASSERT_EQ(r.status, ExecutionStatus::kParked);
    ASSERT_EQ(r.waitingFor, approval(kTurns, 0));
  }

  // Edits the newest snapshot of "cp" with `edit` and stores it back.
  void editSnapshot(const std::function<void(json::object&)>& edit) {
    auto snapshot = snapshots_.latest("cp");
    ASSERT_TRUE(snapshot);
    edit(snapshot->state.as_object());
    snapshots_.put(*snapshot);
  }

  kernel::MemorySnapshotStore snapshots_;
  std::vector<std::string> warnings_;
  workflow::RuntimeOptions runtimeOptions_;  // what snapshotting() starts from
};

// Every string with "hunter2-key" in it, redacted (what security.redact does to journaled
// values).
json::value redactSecret(json::value v) {
  if (auto* s = v.if_string()) {
    std::string text(*s);
    for (auto at = text.find("hunter2-key"); at != std::string::npos; at = text.find("hunter2-key"))
      text.replace(at, 11, "[REDACTED:k]");
    return json::value(text);
  }
  if (auto* a = v.if_array()) {
    for (auto& e : *a) e = redactSecret(std::move(e));
  } else if (auto* o = v.if_object()) {
    for (auto& e : *o) e.value() = redactSecret(std::move(e.value()));
  }
  return v;
}

TEST_P(AgentCheckpoint, AResumeFromTheParkSnapshotReplaysOnlyTheLastTurn) {
  setUp();
  runToTheLastPark();
  int calls = model_->calls;
  auto r = snapshotting(store_)->resume("cp");
  ASSERT_EQ(r.status, ExecutionStatus::kParked);
  EXPECT_EQ(r.waitingFor, approval(kTurns, 0));
  EXPECT_EQ(r.replayedSteps, 1) << "only turn " << kTurns << "'s model step";
  EXPECT_EQ(r.effectsRun, 0);
  EXPECT_EQ(model_->calls, calls);
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_P(AgentCheckpoint, AResumedLoopSendsTheModelTheTranscriptOfAnUninterruptedRun) {
  setUp();
  auto expected = reference();
  runToTheLastPark();
  snapshotting(store_)->resume("cp");  // from the checkpoint, parks again
  model_->requests.clear();
  auto r = snapshotting(store_)->signal("cp", approval(kTurns, 0), json::value{{"approved", true}});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.output.at("answer").as_string(), "all done");
  EXPECT_EQ(toolCalls_["send_email"], 2);  // the reference's and this run's approved call
  std::string next = "research#turn:" + std::to_string(kTurns + 1) + ":model";
  ASSERT_EQ(model_->requests.count(next), 1u);
  EXPECT_EQ(model_->requests.at(next), expected.at(next));
  // The log rebuilds to what the model was sent (audit and export read it).
  EXPECT_EQ(agent::rebuildModelInputs(store_.read("cp"), "research").at(next), expected.at(next));
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_P(AgentCheckpoint, CompactionAfterAResumeSummarizesTheSameTranscript) {
  setUp(agent::CompactionOptions{20'000, 2, ""});
  auto expected = reference();
  runToTheLastPark();
  model_->requests.clear();
  auto r = snapshotting(store_)->signal("cp", approval(kTurns, 0), json::value{{"approved", true}});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  int compared = 0;
  for (const auto& [step, messages] : model_->requests) {
    EXPECT_EQ(messages, expected.at(step)) << step;
    ++compared;
  }
  EXPECT_GE(compared, 1);
}

TEST_P(AgentCheckpoint, EveryResumeAfterACrashRecordsWhatAnUninterruptedRunRecords) {
  setUp();
  auto expected = reference();
  for (int64_t crashAt : {9, 13, 30, 61}) {
    std::string id = "crash-" + std::to_string(crashAt);
    FaultyEventStore faulty(store_);
    faulty.failFromAppend(crashAt);
    try {
      // Parks for turn 5's approval at the 12th append; a later crash comes with the signal.
      auto first = snapshotting(faulty, 7)->start("research", json::value("go"), {.id = id});
      ASSERT_EQ(first.waitingFor, approval(5, 1)) << crashAt;
      try {
        snapshotting(faulty, 7)->signal(id, approval(5, 1), json::value{{"approved", false}});
        ADD_FAILURE() << "signal() returned with the store dead at append " << crashAt;
      } catch (const FailedPreconditionError& e) {  // recorded; the run did not go on
        EXPECT_GT(crashAt, 13) << e.what();
        EXPECT_NE(std::string(e.what()).find("do not send it again"), std::string::npos);
      } catch (const UnavailableError&) {  // the signal's own (13th) append died: not recorded
        EXPECT_EQ(crashAt, 13);
      }
    } catch (const UnavailableError&) {
      EXPECT_LT(crashAt, 12);
    }
    model_->requests.clear();
    auto r = snapshotting(store_, 7)->resume(id);
    if (r.status == ExecutionStatus::kParked && r.waitingFor == approval(5, 1)) {
      r = snapshotting(store_, 7)->signal(id, approval(5, 1), json::value{{"approved", false}});
    }
    ASSERT_EQ(r.waitingFor, approval(kTurns, 0)) << crashAt;
    r = snapshotting(store_, 7)->signal(id, approval(kTurns, 0), json::value{{"approved", true}});
    ASSERT_EQ(r.status, ExecutionStatus::kCompleted) << crashAt;
    for (const auto& [step, messages] : model_->requests) {
      EXPECT_EQ(messages, expected.at(step)) << "crash at append " << crashAt << ", " << step;
    }
  }
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_P(AgentCheckpoint, SnapshotsOfALongRunHoldOneTurnNotTheWholeRun) {
  setUp();
  runToTheLastPark(/*every=*/10);
  auto snapshot = snapshots_.latest("cp");
  ASSERT_TRUE(snapshot);
  const auto& state = snapshot->state.as_object();
  EXPECT_EQ(state.at("version").as_int64(), 2);
  // Turn kTurns's model step; every earlier turn was forgotten by a checkpoint.
  EXPECT_EQ(state.at("steps").as_object().size(), 1u) << json::toText(state.at("steps"));
  EXPECT_TRUE(state.at("signals").as_object().empty()) << "turn 5's approval was forgotten";
  EXPECT_EQ(state.at("checkpoints").at("research").at("turn").as_int64(), kTurns);
  EXPECT_LT(json::toText(snapshot->state).size(), 4'000u);
}

TEST_P(AgentCheckpoint, ACheckpointThatDoesNotMatchTheLogReplaysTheWholeLog) {
  setUp();
  auto expected = reference();
  runToTheLastPark();
  editSnapshot([](json::object& s) {
    auto& c = s.at("checkpoints").at("research").as_object();
    c["messages"] = c.at("messages").as_int64() - 1;
  });
  model_->requests.clear();
  auto r = snapshotting(store_)->signal("cp", approval(kTurns, 0), json::value{{"approved", true}});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.effectsRun, 2) << "the approved call (first attempt) and turn 41's model call";
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("the checkpoint it resumes from recorded"), std::string::npos)
      << warnings_[0];
  EXPECT_NE(warnings_[0].find("the whole log of execution 'cp' is replayed"), std::string::npos)
      << warnings_[0];
  EXPECT_EQ(toolCalls_["send_email"], 2) << "the approved call ran once";
  for (const auto& [step, messages] : model_->requests) EXPECT_EQ(messages, expected.at(step));
}

TEST_P(AgentCheckpoint, ACheckpointOfAnUnknownVersionReplaysTheWholeLog) {
  setUp();
  runToTheLastPark();
  editSnapshot([](json::object& s) { s.at("checkpoints").at("research").as_object()["version"] = 99; });
  auto r = snapshotting(store_)->resume("cp");
  ASSERT_EQ(r.status, ExecutionStatus::kParked);
  EXPECT_GT(r.replayedSteps, kTurns) << "every recorded step, from the log";
  EXPECT_EQ(r.effectsRun, 0);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("the checkpoint of agent loop 'research' in execution 'cp' cannot "
                              "be read: version 99 is not 1"),
            std::string::npos)
      << warnings_[0];
}

TEST_P(AgentCheckpoint, ARedactedSystemPromptIsSentAsConfiguredAndNeverKept) {
  runtimeOptions_.journalFilter = redactSecret;
  setUp(std::nullopt, "You may use the key hunter2-key.");
  {
    // Turn 1's checkpoint holds the system prompt (nothing was sent yet); a run that dies
    // after its first model step leaves a snapshot of it.
    FaultyEventStore faulty(store_);
    faulty.failFromAppend(3);
    EXPECT_THROW(snapshotting(faulty, 1)->start("research", json::value("go"), {.id = "early"}),
                 UnavailableError);
    auto early = snapshots_.latest("early");
    ASSERT_TRUE(early);
    ASSERT_EQ(early->state.at("checkpoints").at("research").at("turn"), 1);
    EXPECT_EQ(json::toText(early->state).find("hunter2-key"), std::string::npos)
        << "a checkpoint is filtered as the journal is: " << json::toText(early->state);
  }
  runToTheLastPark();
  model_->requests.clear();
  auto r = snapshotting(store_)->signal("cp", approval(kTurns, 0), json::value{{"approved", true}});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  std::string next = "research#turn:" + std::to_string(kTurns + 1) + ":model";
  EXPECT_EQ(model_->requests.at(next)[0].at("content"), "You may use the key hunter2-key.");
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_P(AgentCheckpoint, AWorkflowThatCatchesEveryErrorDoesNotSwallowTheFallback) {
  setUp();
  workflows_.add("catching", "", [this](workflow::WorkflowContext& ctx) -> json::value {
    try {
      return agent::agentLoop(ctx, "research", options_, json::value("go"));
    } catch (const std::exception& e) {
      return json::value(std::string("swallowed: ") + e.what());
    }
  });
  auto r = snapshotting(store_)->start("catching", nullptr, {.id = "cp"});
  ASSERT_EQ(r.status, ExecutionStatus::kParked);
  snapshotting(store_)->signal("cp", approval(5, 1), json::value{{"approved", false}});
  editSnapshot([](json::object& s) { s.at("checkpoints").at("research").as_object()["version"] = 7; });
  r = snapshotting(store_)->signal("cp", approval(kTurns, 0), json::value{{"approved", true}});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.output.at("answer"), "all done");
  EXPECT_EQ(warnings_.size(), 1u);
}

TEST_P(AgentCheckpoint, WithoutJournaledInputsNoCheckpointIsKept) {
  runtimeOptions_.journalEffectInputs = false;
  setUp();
  runToTheLastPark();
  EXPECT_FALSE(snapshots_.latest("cp")->state.at("checkpoints").as_object().contains("research"));
  auto r = snapshotting(store_)->resume("cp");
  ASSERT_EQ(r.status, ExecutionStatus::kParked);
  EXPECT_GT(r.replayedSteps, kTurns) << "every recorded step";
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST(AgentLoopName, ANameThatHoldsTheStepIdMarkerIsRefused) {
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  kernel::MemoryEventStore store;
  agent::AgentOptions o;
  o.model = "m";
  agent::registerAgentWorkflow(workflows, "a#turn:1", o);
  workflow::WorkflowRuntime runtime(store, workflows, tasks, nullptr);
  auto r = runtime.start("a#turn:1", json::value("go"));
  ASSERT_EQ(r.status, ExecutionStatus::kFailed);
  EXPECT_NE(json::toText(r.error).find("must not contain \\\"#turn:\\\""), std::string::npos)
      << json::toText(r.error);
}

INSTANTIATE_TEST_SUITE_P(ModelInput, AgentCheckpoint,
                         bothJournalModes(), journalModeName);

}  // namespace
}  // namespace loom::testing
