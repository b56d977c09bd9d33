// `loom fork` and `loom rerun` as an operator uses them, on a sealed home with claim-checked
// tool results (the compliance example's settings): a fork at a tool step completes on edited
// code, the source's stored log is byte for byte as it was, both runs cite the same blobs
// (sweep keeps them), and erasing the subject erases both, after which a fork is refused. A
// run that failed on a broken tool is rerun after the fix, running only the failed call again.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sealed_app_fixture.h"
#include "support/home_blobs.h"

namespace loom::testing {
namespace {

class ForkCli : public SealedAppCli {
 protected:
  // The step ids of `id`'s recorded tool calls, in order.
  std::vector<std::string> toolSteps(const std::string& id) {
    Outcome log = loom({"log", id, "--json"});
    EXPECT_EQ(log.exitCode, 0) << log.err;
    std::vector<std::string> steps;
    const json::value events = log.json();
    for (const auto& e : events.as_array()) {
      if (e.at("type") != "STEP_COMPLETED") continue;
      std::string step(e.at("stepId").as_string());
      if (step.find(":tool:") != std::string::npos) steps.push_back(step);
    }
    return steps;
  }
  std::string storedLog(const std::string& id) { return homeStoredLog(home_, id); }
  std::string witness_ = dir_ / "witness.txt";
};

TEST_F(ForkCli, AForkAtAToolStepOfASealedRunCompletesOnNewCodeAndSharesTheSourcesBlobs) {
  std::string script = writeScript(dir_, "s.json", fetchTurns(2));
  std::string app = writeApp(dir_, "a.toml", script, fetchTool());
  env_.push_back("LOOM_TOOL_WITNESS=" + witness_);
  ASSERT_EQ(loom({"run", app, "--subject", "alice", "--id", "a1"}).exitCode, 0);
  const std::vector<std::string> shared = blobs(home_);
  ASSERT_EQ(shared.size(), 2U) << "each page is claim-checked";
  const std::string before = storedLog("a1");
  ASSERT_NE(before.find("\"sealed\""), std::string::npos) << "the run is sealed";
  const std::vector<std::string> steps = toolSteps("a1");
  ASSERT_EQ(steps.size(), 2U);

  // New code: the script's answer changes (a new app version).
  std::ofstream(script) << R"({"turns": [{"toolCalls": [{"name": "fetch_report", "arguments":
      {"page": 1}}]}, {"toolCalls": [{"name": "fetch_report", "arguments": {"page": 2}}]},
      {"answer": "done, on the new script"}]})";
  Outcome fork = loom({"fork", "a1", "--at", steps[1], "--id", "f1", "--json"});
  ASSERT_EQ(fork.exitCode, 0) << fork.err;
  EXPECT_EQ(fork.json().at("status"), "completed") << fork.out;
  EXPECT_EQ(fork.json().at("output").at("answer"), "done, on the new script") << fork.out;
  EXPECT_EQ(readLines(witness_), (std::vector<std::string>{
                                     "fetch_report page=1", "fetch_report page=2",
                                     "fetch_report page=2"}))
      << "only the call at the fork point ran again";
  EXPECT_EQ(storedLog("a1"), before) << "the source's log changed";
  std::string f1 = storedLog("f1");
  EXPECT_NE(f1.find("\"sealed\""), std::string::npos) << "the fork is sealed: " << f1;
  Outcome state = loom({"state", "f1", "--json"});
  ASSERT_EQ(state.exitCode, 0) << state.err;
  Outcome source = loom({"state", "a1", "--json"});
  EXPECT_NE(state.json().at("codeVersion"), source.json().at("codeVersion"))
      << "the fork runs on the edited app";

  EXPECT_EQ(blobs(home_), shared) << "nothing was copied";
  Outcome swept = loom({"sweep", "--grace-hours", "0", "--json"});
  ASSERT_EQ(swept.exitCode, 0) << swept.err;
  EXPECT_EQ(swept.json().at("deleted"), 0);
  EXPECT_EQ(blobs(home_), shared);

  Outcome erased = loom({"erase", "alice", "--json"});
  ASSERT_EQ(erased.exitCode, 0) << erased.err;
  EXPECT_TRUE(blobs(home_).empty()) << "the blobs both runs cited are the subject's";
  Outcome forkLog = loom({"log", "f1", "--json"});
  EXPECT_NE(forkLog.out.find("\"erased\""), std::string::npos) << "the fork was not erased";
  Outcome refused = loom({"fork", "a1", "--at", steps[0], "--id", "f2"});
  EXPECT_EQ(refused.exitCode, 1);
  EXPECT_NE(refused.err.find("erased"), std::string::npos) << refused.err;
  EXPECT_EQ(loom({"log", "f2"}).exitCode, 1) << "a refused fork left a log";
}

// A step that failed for good (its tool could not write where it was told: attempts = 1) fails
// the run; once that is fixed, a rerun completes as a new run and the failed one stays failed.
TEST_F(ForkCli, ARunThatFailedOnABrokenStepIsRerunAfterTheFix) {
  const std::string missing = dir_ / "out";
  const std::string config = dir_ / "loom.toml";
  std::ofstream(config) << "[execution.retry]\nmaxAttempts = 1\n";
  const std::string input =
      R"({"steps": 3, "witness": ")" + missing + R"(/w.txt"})";
  Outcome failed = loom({"run", "example.steps", "--config", config, "--id", "r1", "--input",
                         input, "--json"});
  ASSERT_EQ(failed.exitCode, 1) << failed.out;
  ASSERT_EQ(failed.json().at("status"), "failed") << failed.out;
  Outcome notFailed = loom({"rerun", "nope"});
  EXPECT_EQ(notFailed.exitCode, 1);
  EXPECT_NE(notFailed.err.find("no execution 'nope'"), std::string::npos) << notFailed.err;

  std::filesystem::create_directory(missing);  // the fix
  Outcome rerun = loom({"rerun", "r1", "--id", "r2", "--json"});
  ASSERT_EQ(rerun.exitCode, 0) << rerun.err;
  EXPECT_EQ(rerun.json().at("status"), "completed") << rerun.out;
  EXPECT_EQ(readLines(missing + "/w.txt"),
            (std::vector<std::string>{"step-1", "step-2", "step-3"}));
  const json::value stillFailed = loom({"ls", "--status", "failed", "--json"}).json();
  ASSERT_EQ(stillFailed.as_array().size(), 1U) << "the source stays failed";
  EXPECT_EQ(stillFailed.at(0).at("id"), "r1");
  Outcome again = loom({"rerun", "r2"});
  EXPECT_EQ(again.exitCode, 1);
  EXPECT_NE(again.err.find("did not fail"), std::string::npos) << again.err;
}

}  // namespace
}  // namespace loom::testing
