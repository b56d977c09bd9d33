// Replay of an agent app after SIGKILL: `loom run app.toml` (10 turns, each calling the
// fetch_report subprocess tool, which sleeps 100 ms and appends "fetch_report page=N" to a
// witness file) is killed at several turns; `loom resume` in a fresh process finishes it.
// No recorded step runs again, whether the resume replays the whole log or starts at the loop
// checkpoint of a snapshot written every 3 events: the resume calls the model only for the
// turns that were not recorded ("modelCalls"), and the witness shows every page fetched once, except at most the
// one call that was in flight at the kill (it ran, but its result was not recorded yet).
#include <map>
#include <set>

#include "agent_apps/agent_app_fixture.h"

namespace loom::testing {
namespace {

constexpr int kPages = 10;

struct KillPoint {
  const char* name;
  std::size_t afterWitnessLines;  // SIGKILL once the witness file has this many lines
  // execution.snapshotEveryEvents of the app: 0 writes none (the resume replays the whole
  // log); a small interval makes the resume start at a checkpoint close to the kill.
  int snapshotEveryEvents = 0;
};

void PrintTo(const KillPoint& k, std::ostream* os) { *os << k.name; }

class AgentAppCrashTest : public AgentAppTest, public ::testing::WithParamInterface<KillPoint> {};

TEST_P(AgentAppCrashTest, ResumeAfterSigkillRerunsNoRecordedModelOrToolStep) {
  int every = GetParam().snapshotEveryEvents;
  std::string app =
      writeApp(fetchPagesScript(kPages), fetchReportTool(", \"--delay\", \"0.1\""),
               "\n[execution]\nsnapshotEveryEvents = " + std::to_string(every) + "\n");
  runAndKillAfter(app, "c", GetParam().afterWitnessLines);
  if (HasFatalFailure()) return;

  int models = recordedSteps("c", ":model");
  int tools = recordedSteps("c", ":tool:");
  std::size_t ranAtKill = readLines(witness_).size();
  EXPECT_GE(ranAtKill, static_cast<std::size_t>(tools));
  EXPECT_LE(ranAtKill, static_cast<std::size_t>(tools) + 1) << "at most one call in flight";

  Outcome resumed = loom({"resume", "c", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  json::value result = resumed.json();
  EXPECT_EQ(result.at("status"), "completed");
  EXPECT_EQ(result.at("output").at("turns"), kPages + 1);
  EXPECT_EQ(result.at("modelCalls"), kPages + 1 - models) << "only unrecorded turns call the model";
  int64_t replayed = result.at("replayedSteps").as_int64();
  if (every == 0) {
    EXPECT_EQ(replayed, models + tools);
  } else {
    // The newest snapshot is at most `every` events behind the kill, and its checkpoint at the
    // start of its turn: the resume replays that turn and the log's tail, not the whole run.
    EXPECT_LE(replayed, 2 + every);
    if (models + tools > 2 + every) {
      EXPECT_LT(replayed, models + tools);
    }
    EXPECT_EQ(resumed.err.find("warning"), std::string::npos) << resumed.err;
  }
  EXPECT_EQ(result.at("effectsRun"), (kPages + 1 - models) + (kPages - tools));

  std::map<std::string, int> seen;
  for (const auto& line : readLines(witness_)) ++seen[line];
  int twice = 0;
  for (int page = 1; page <= kPages; ++page) {
    int n = seen["fetch_report page=" + std::to_string(page)];
    if (page <= tools) {
      EXPECT_EQ(n, 1) << "recorded page " << page << " ran again";
    } else {
      EXPECT_GE(n, 1) << "page " << page << " never ran";
      EXPECT_LE(n, 2);
      if (n == 2) {
        ++twice;
        EXPECT_EQ(page, tools + 1) << "only the call in flight at the kill may run twice";
      }
    }
  }
  EXPECT_LE(twice, 1);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kPages));

  Outcome again = loom({"resume", "c", "--json"});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(again.json().at("effectsRun"), 0) << "an ended run runs nothing";
  EXPECT_EQ(again.json().at("modelCalls"), 0);
}

INSTANTIATE_TEST_SUITE_P(Turns, AgentAppCrashTest,
                         ::testing::Values(KillPoint{"afterTurn1", 1}, KillPoint{"afterTurn4", 4},
                                           KillPoint{"afterTurn8", 8},
                                           KillPoint{"afterTurn4FromASnapshot", 4, 3},
                                           KillPoint{"afterTurn8FromASnapshot", 8, 3}),
                         [](const ::testing::TestParamInfo<KillPoint>& info) {
                           return info.param.name;
                         });

// A SIGKILL in the middle of a parallel batch: each turn asks for three fetch_report calls,
// which run at once (agent.parallelToolCalls = 3) and are journaled in call order. Whatever
// the kill lands on, a call whose result was recorded never runs again; the calls that ran
// without being recorded all belong to the one batch in flight, and each runs at most twice.
struct BatchKill {
  const char* name;
  std::size_t afterWitnessLines;
  int snapshotEveryEvents;
};

void PrintTo(const BatchKill& k, std::ostream* os) { *os << k.name; }

class AgentAppBatchCrashTest : public AgentAppTest,
                               public ::testing::WithParamInterface<BatchKill> {};

constexpr int kBatchTurns = 6;
constexpr int kCallsPerTurn = 3;

TEST_P(AgentAppBatchCrashTest, ResumeAfterSigkillMidBatchRerunsOnlyTheBatchInFlight) {
  json::array turns;
  for (int t = 1; t <= kBatchTurns; ++t) {
    json::array calls;
    for (int j = 0; j < kCallsPerTurn; ++j) {
      int page = (t - 1) * kCallsPerTurn + j + 1;
      calls.push_back(json::object{{"name", "fetch_report"}, {"arguments", {{"page", page}}}});
    }
    turns.push_back(json::object{{"toolCalls", std::move(calls)}});
  }
  turns.push_back(json::object{{"answer", "Read every page."}});
  std::string app = writeApp(
      json::toText(json::object{{"turns", std::move(turns)}}),
      fetchReportTool(", \"--delay\", \"0.2\""),
      "\n[execution]\nsnapshotEveryEvents = " + std::to_string(GetParam().snapshotEveryEvents) +
          "\n");
  // agent.parallelToolCalls lives in [agent]: the app file's first table.
  std::string text = fileText(app);
  text.replace(text.find("maxTurns = 50"), 13, "maxTurns = 50\nparallelToolCalls = 3");
  write("app.toml", text);

  runAndKillAfter(app, "b", GetParam().afterWitnessLines);
  if (HasFatalFailure()) return;

  std::set<int> recorded;  // pages whose fetch_report result is in the log
  for (const auto& e : events("b")) {
    const auto& o = e.as_object();
    if (o.at("type") != "STEP_COMPLETED") continue;
    auto id = std::string(o.at("stepId").as_string());
    auto at = id.find(":tool:");
    if (at == std::string::npos) continue;
    int turn = std::stoi(id.substr(id.find("#turn:") + 6));
    recorded.insert((turn - 1) * kCallsPerTurn + std::stoi(id.substr(at + 6)) + 1);
  }

  Outcome resumed = loom({"resume", "b", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "completed");
  EXPECT_EQ(resumed.err.find("warning"), std::string::npos) << resumed.err;

  std::map<std::string, int> seen;
  for (const auto& line : readLines(witness_)) ++seen[line];
  std::set<int> twiceTurns;
  for (int page = 1; page <= kBatchTurns * kCallsPerTurn; ++page) {
    int n = seen["fetch_report page=" + std::to_string(page)];
    EXPECT_GE(n, 1) << "page " << page << " never ran";
    EXPECT_LE(n, 2) << "page " << page;
    if (recorded.contains(page)) {
      EXPECT_EQ(n, 1) << "recorded page " << page << " ran again";
    }
    if (n == 2) twiceTurns.insert((page - 1) / kCallsPerTurn);
  }
  EXPECT_LE(twiceTurns.size(), 1u) << "only the batch in flight at the kill may run again";
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kBatchTurns * kCallsPerTurn));
}

INSTANTIATE_TEST_SUITE_P(Kills, AgentAppBatchCrashTest,
                         ::testing::Values(BatchKill{"inTheFirstBatch", 2, 0},
                                           BatchKill{"inTheThirdBatch", 7, 0},
                                           BatchKill{"inTheThirdBatchFromASnapshot", 8, 2},
                                           BatchKill{"inTheFifthBatchFromASnapshot", 13, 2}),
                         [](const ::testing::TestParamInfo<BatchKill>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace loom::testing
