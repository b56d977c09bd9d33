// The newcomer's probe of issue "Change code under live runs safely": a parked agent app run
// whose tool and model script were edited is not continued on the edited code (pinned, the
// default). `loom signal` refuses, naming both versions; the signal is kept, no step runs, and
// with the files as they were the run goes on.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent_app_fixture.h"

namespace loom::testing {
namespace {

namespace fs = std::filesystem;

std::string readAll(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using AgentAppVersionTest = AgentAppTest;

TEST_F(AgentAppVersionTest, AnEditedAppDoesNotContinueARunStartedOnTheOldOne) {
  const fs::path folder = dir_.path();
  const fs::path tool = folder / "tools" / "fetch_report";
  std::string app = writeAppWithItsOwnTool(tool);
  ASSERT_EQ(loom({"run", app, "--id", "v"}).exitCode, 0);
  const std::string recorded(events("v").at(0).at("codeVersion").as_string());
  EXPECT_EQ(recorded.rfind("app:", 0), 0U) << recorded;
  Outcome state = loom({"state", "v", "--json"});
  ASSERT_EQ(state.exitCode, 0) << state.err;
  EXPECT_EQ(state.json().at("codeVersion").as_string(), recorded) << "loom state shows the version";

  // The tool and the script change while the run is parked.
  const std::string oldTool = readAll(tool), oldScript = readAll(folder / "script.json");
  std::ofstream(tool, std::ios::app) << "# renamed the output field\n";
  write("script.json", fetchPagesScript(3));
  std::size_t before = events("v").size();
  Outcome refused =
      loom({"signal", "v", "approve:research#turn:1:tool:0", R"({"approved": true})"});
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("started on code version " + recorded), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("this code is version app:"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("the signal is recorded"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("this code is version " + recorded), std::string::npos)
      << "the edited files are another version";
  EXPECT_TRUE(readLines(witness_).empty()) << "the tool ran on the edited code";
  json::array after = events("v");
  ASSERT_EQ(after.size(), before + 1) << "only the signal is recorded";
  EXPECT_EQ(after.back().at("type"), "SIGNAL_RECEIVED");

  // The files as they were: the same version, and the run goes on with the signal it has.
  std::ofstream(tool, std::ios::trunc | std::ios::binary) << oldTool;
  write("script.json", oldScript);
  Outcome resumed = loom({"resume", "v", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "parked");
  EXPECT_EQ(resumed.json().at("waitingFor"), "approve:research#turn:2:tool:0");
  EXPECT_EQ(readLines(witness_), std::vector<std::string>{"fetch_report page=1"});
}

// The same probe under execution.versioning = "latest": the run goes on on the edited app only
// where that replays its log; the renamed tool was never asked for again, so the run parks
// "diverged" at the answered approval, naming it, and nothing runs on the mix.
TEST_F(AgentAppVersionTest, UnderLatestAnEditedAppParksTheRunDivergedInsteadOfMixingCode) {
  const fs::path tool = dir_.path() / "tools" / "fetch_report";
  fs::create_directories(tool.parent_path());
  fs::copy_file(exampleTool("fetch_report"), tool);
  std::string app = writeApp(fetchPagesScript(2),
                             "[[tools]]\nname = \"fetch_report\"\nrequiresApproval = true\n"
                             "command = [\"tools/fetch_report\"]\n",
                             "\n[execution]\nversioning = \"latest\"\n");
  ASSERT_EQ(loom({"run", app, "--id", "v"}).exitCode, 0);
  std::ifstream in(app);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  text.replace(text.find("name = \"fetch_report\""), 21, "name = \"fetch_page\"");
  write("app.toml", text);
  write("script.json", fetchPagesScript(3));
  Outcome signalled =
      loom({"signal", "v", "approve:research#turn:1:tool:0", R"({"approved": true})", "--json"});
  ASSERT_EQ(signalled.exitCode, 0) << signalled.err;
  json::value r = signalled.json();
  EXPECT_EQ(r.at("status"), "parked") << signalled.out;
  EXPECT_EQ(r.at("parkReason"), "diverged") << signalled.out;
  json::array log = events("v");
  EXPECT_EQ(log.back().at("reason"), "diverged");
  EXPECT_EQ(log.back().at("stepId"), "approve:research#turn:1:tool:0");
  EXPECT_NE(json::toText(log.back()).find("without waiting for it"), std::string::npos)
      << json::toText(log.back());
  EXPECT_TRUE(readLines(witness_).empty()) << "the tool ran";
  EXPECT_EQ(recordedSteps("v", ":model"), 1) << "a model turn ran on the mix";
}

// Unchanged code under "latest" goes on through its answered approvals (each wait is asked
// for again before the loop moves past it), and a replay check matches it.
TEST_F(AgentAppVersionTest, UnderLatestUnchangedCodeGoesOnThroughItsApprovals) {
  std::string app = writeApp(fetchPagesScript(2),
                             "[[tools]]\nname = \"fetch_report\"\nrequiresApproval = true\n"
                             "command = [\"" + exampleTool("fetch_report") + "\"]\n",
                             "\n[execution]\nversioning = \"latest\"\n");
  ASSERT_EQ(loom({"run", app, "--id", "v"}).exitCode, 0);
  for (int turn : {1, 2}) {
    Outcome o = loom({"signal", "v", "approve:research#turn:" + std::to_string(turn) + ":tool:0",
                      R"({"approved": true})", "--json"});
    ASSERT_EQ(o.exitCode, 0) << o.err;
    EXPECT_EQ(o.json().at("status"), turn == 1 ? "parked" : "completed") << o.out;
    if (turn == 1) {
      EXPECT_EQ(o.json().at("parkReason"), "approval") << o.out;
    }
  }
  Outcome check = loom({"replay-check"});
  EXPECT_EQ(check.exitCode, 0) << check.out;
}

// A worker keeps a booted app while runs use it. An edit on disk is seen at the next claim:
// the app is loaded again, so a run submitted on the edited files runs on them (not refused as
// another version by the app loaded before, nor run with its old model script).
TEST_F(AgentAppVersionTest, AWorkerLoadsAnAppEditedOnDiskAgain) {
  const fs::path folder = dir_.path();
  const fs::path tool = folder / "tools" / "fetch_report";
  std::string app = writeAppWithItsOwnTool(tool);
  Child worker({"--home", home_, "worker", "--poll-ms", "100"}, dir_, env());
  auto parked = [&](const std::string& id) {
    for (int i = 0; i < 1000; ++i) {
      json::array e = events(id);
      if (!e.empty() && e.back().at("type") == "EXECUTION_PARKED") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  };
  ASSERT_EQ(loom({"run", app, "--submit", "--id", "before"}).exitCode, 0);
  ASSERT_TRUE(parked("before")) << "the worker did not run the first run";

  std::ofstream(tool, std::ios::app) << "# edited while the worker keeps the app\n";
  ASSERT_EQ(loom({"run", app, "--submit", "--id", "after"}).exitCode, 0);
  EXPECT_NE(events("after").at(0).at("codeVersion"), events("before").at(0).at("codeVersion"));
  EXPECT_TRUE(parked("after")) << "the worker did not run the run of the edited app";
  worker.kill(SIGTERM);
  Outcome stopped = worker.wait();
  EXPECT_NE(stopped.out.find("after: parked (approval)"), std::string::npos)
      << stopped.out << stopped.err;
  EXPECT_EQ(stopped.out.find("left for a worker"), std::string::npos) << stopped.out;
}

// `loom replay-check` in CI: the recorded runs against the app as it is on disk. Renaming a
// tool the runs called is found in exactly those runs (the step named); filters select runs;
// nothing runs and no log changes.
TEST_F(AgentAppVersionTest, ReplayCheckFindsTheRunsAnEditedAppNoLongerReplays) {
  std::string app = writeApp(fetchPagesScript(2), fetchReportTool());
  ASSERT_EQ(loom({"run", app, "--id", "calls"}).exitCode, 0);
  write("answer.json", R"({"turns": [{"answer": "no tools needed"}]})");
  std::string quiet = write("quiet.toml", "[agent]\nname = \"quiet\"\nprompt = \"hi\"\n\n"
                                          "[model]\nkind = \"scripted\"\nscript = \"answer.json\"\n\n" +
                                              fetchReportTool());
  ASSERT_EQ(loom({"run", quiet, "--id", "quiet"}).exitCode, 0);
  ASSERT_EQ(loom({"run", "example.steps", "--id", "steps", "--input", R"({"steps": 2})"}).exitCode,
            0);
  Outcome clean = loom({"replay-check"});
  EXPECT_EQ(clean.exitCode, 0) << clean.out << clean.err;
  EXPECT_NE(clean.out.find("checked 3 run(s): 3 matched"), std::string::npos) << clean.out;

  // The tool is renamed in both apps: only the run that called it diverges.
  const std::size_t witnessed = readLines(witness_).size();
  const std::string before = json::toText(json::value(events("calls")));
  for (const std::string file : {"app.toml", "quiet.toml"}) {
    std::ifstream in(dir_ / file);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text.replace(text.find("name = \"fetch_report\""), 21, "name = \"fetch_page\"");
    write(file, text);
  }
  Outcome found = loom({"replay-check", "--json"});
  EXPECT_EQ(found.exitCode, 1) << found.out << found.err;
  json::value report = found.json();
  EXPECT_EQ(report.at("diverged"), 1) << found.out;
  EXPECT_EQ(report.at("matched"), 2) << found.out;
  for (const auto& run : report.at("runs").as_array()) {
    if (run.at("id") != "calls") continue;
    EXPECT_EQ(run.at("outcome"), "diverged");
    EXPECT_EQ(run.at("stepId"), "research#turn:1:tool:0") << json::toText(run);
  }
  EXPECT_EQ(readLines(witness_).size(), witnessed) << "the check ran a tool";
  EXPECT_EQ(json::toText(json::value(events("calls"))), before) << "the check wrote to a log";
  Outcome text = loom({"replay-check", "--workflow", "research"});
  EXPECT_NE(text.out.find("calls: diverged at research#turn:1:tool:0: the log recorded step "
                          "'research#turn:1:tool:0'; the code went past it"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("checked 1 run(s)"), std::string::npos) << text.out;
  Outcome last = loom({"replay-check", "--last", "1"});
  EXPECT_EQ(last.exitCode, 0) << "the last run started is the workflow's: " << last.out;
  Outcome future = loom({"replay-check", "--since", "2999-01-01T00:00:00.000Z"});
  EXPECT_NE(future.out.find("checked 0 run(s)"), std::string::npos) << future.out;
}

}  // namespace
}  // namespace loom::testing
