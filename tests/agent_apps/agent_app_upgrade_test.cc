// `loom upgrade` and the runs no worker serves, as an operator meets them: a parked agent app
// run whose tool file was edited is moved to the edited app only when the edited app replays
// its log; a worker of the edited app leaves a run of the old one, and `loom ls` marks that
// run until it is upgraded or the worker stops.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent_app_fixture.h"

namespace loom::testing {
namespace {

namespace fs = std::filesystem;

class AgentAppUpgradeTest : public AgentAppTest {
 protected:
  // The run's entry in `loom ls --json`.
  json::value listed(const std::string& id) {
    Outcome ls = loom({"ls", "--json"});
    EXPECT_EQ(ls.exitCode, 0) << ls.err;
    json::value all = ls.json();
    for (const auto& run : all.as_array()) {
      if (run.at("id").as_string() == id) return run;
    }
    ADD_FAILURE() << "no run " << id << " in " << ls.out;
    return json::value();
  }
  bool unserved(const std::string& id) {
    const auto* mark = listed(id).as_object().if_contains("unserved");
    return mark != nullptr && *mark == true;
  }
  const fs::path tool_ = dir_.path() / "tools" / "fetch_report";
};

TEST_F(AgentAppUpgradeTest, AnEditThatReplaysTheRunIsUpgradedToAndTheRunGoesOnThere) {
  std::string app = writeAppWithItsOwnTool(tool_);
  ASSERT_EQ(loom({"run", app, "--id", "v"}).exitCode, 0);
  const std::string before(events("v").at(0).at("codeVersion").as_string());
  std::ofstream(tool_, std::ios::app) << "# a comment: same behaviour, new version\n";
  Outcome refused = loom({"signal", "v", "approve:research#turn:1:tool:0", R"({"approved": true})"});
  ASSERT_NE(refused.exitCode, 0) << "pinned: the edited app may not continue it yet";

  Outcome usage = loom({"upgrade", "v"});
  EXPECT_NE(usage.exitCode, 0) << "--to-current is the operator's say-so";
  Outcome none = loom({"upgrade", "--to-current"});
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("name the runs to upgrade (IDs), or pass --all"), std::string::npos)
      << none.err;
  Outcome both = loom({"upgrade", "v", "--all", "--to-current"});
  EXPECT_EQ(both.exitCode, 2);
  EXPECT_NE(both.err.find("either run IDs or --all, not both"), std::string::npos) << both.err;
  Outcome up = loom({"upgrade", "v", "--to-current"});
  ASSERT_EQ(up.exitCode, 0) << up.out << up.err;
  EXPECT_NE(up.out.find("v: upgraded from " + before + " to app:"), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("upgraded 1 run(s), 0 already on the code at hand, 0 refused"),
            std::string::npos) << up.out;
  json::array log = events("v");
  ASSERT_GE(log.size(), 3U);
  const json::value& upgraded = log.at(log.size() - 2);
  EXPECT_EQ(upgraded.at("type"), "CODE_UPGRADED");
  EXPECT_EQ(upgraded.at("from").as_string(), before);
  const std::string after(upgraded.at("codeVersion").as_string());
  EXPECT_NE(after, before);
  EXPECT_EQ(log.back().at("type"), "EXECUTION_PARKED") << "still parked at its approval";
  EXPECT_EQ(listed("v").at("codeVersion").as_string(), after) << "loom ls shows the version it moved to";
  EXPECT_EQ(listed("v").at("status"), "parked");
  EXPECT_TRUE(readLines(witness_).empty()) << "the upgrade ran a tool";

  Outcome again = loom({"upgrade", "v", "--to-current", "--json"});
  ASSERT_EQ(again.exitCode, 0) << again.out;
  EXPECT_EQ(again.json().at("current"), 1) << again.out;
  EXPECT_EQ(events("v").size(), log.size()) << "a second upgrade wrote something";

  Outcome resumed =
      loom({"signal", "v", "approve:research#turn:1:tool:0", R"({"approved": true})", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("waitingFor"), "approve:research#turn:2:tool:0") << resumed.out;
  EXPECT_EQ(readLines(witness_), std::vector<std::string>{"fetch_report page=1"});
}

TEST_F(AgentAppUpgradeTest, AnEditThatDoesNotReplayTheRunIsRefusedNamingTheStep) {
  std::string app = writeAppWithItsOwnTool(tool_);
  ASSERT_EQ(loom({"run", app, "--id", "v"}).exitCode, 0);
  ASSERT_EQ(loom({"signal", "v", "approve:research#turn:1:tool:0", R"({"approved": true})"})
                .exitCode,
            0);
  std::ifstream in(app);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  text.replace(text.find("name = \"fetch_report\""), 21, "name = \"fetch_page\"");
  write("app.toml", text);
  const std::string recorded = json::toText(json::value(events("v")));
  Outcome refused = loom({"upgrade", "--all", "--to-current", "--json"});
  EXPECT_EQ(refused.exitCode, 1) << refused.out << refused.err;
  json::value report = refused.json();
  EXPECT_EQ(report.at("refused"), 1) << refused.out;
  const auto& run = report.at("runs").as_array().at(0);
  EXPECT_EQ(run.at("id"), "v");
  std::string why(run.at("why").as_string());
  EXPECT_NE(why.find("at step 'research#turn:1:tool:0'"), std::string::npos) << why;
  EXPECT_NE(why.find("loom fork v --at STEP"), std::string::npos) << why;
  EXPECT_EQ(json::toText(json::value(events("v"))), recorded) << "a refused upgrade wrote";
}

// A worker of the edited app leaves a submitted run of the old one: `loom ls` marks it while
// the worker lives (and not once it stopped); upgraded, a worker runs it.
TEST_F(AgentAppUpgradeTest, LsMarksARunNoLiveWorkerOfItsVersionServesUntilItIsUpgraded) {
  std::string app = writeAppWithItsOwnTool(tool_);
  ASSERT_EQ(loom({"run", app, "--submit", "--id", "old"}).exitCode, 0);
  std::ofstream(tool_, std::ios::app) << "# deployed: the old version is gone from disk\n";
  EXPECT_FALSE(unserved("old")) << "no worker has looked at it yet";

  Child worker({"--home", home_, "worker", "--poll-ms", "100"}, dir_, env());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!unserved("old") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(unserved("old")) << "the worker left the run, yet loom ls does not mark it";
  Outcome text = loom({"ls"});
  EXPECT_NE(text.out.find("*"), std::string::npos) << text.out;
  EXPECT_NE(text.err.find("1 run (VERSION*) of a code version that live workers left"),
            std::string::npos) << text.err;
  EXPECT_NE(text.err.find("loom upgrade ID --to-current"), std::string::npos) << text.err;

  Outcome up = loom({"upgrade", "old", "--to-current"});
  ASSERT_EQ(up.exitCode, 0) << up.out << up.err;
  EXPECT_FALSE(unserved("old")) << "upgraded to the version the worker runs";
  worker.kill(SIGTERM);
  Outcome stopped = worker.wait();
  EXPECT_NE(stopped.out.find("old: left for a worker of its code version"), std::string::npos)
      << stopped.out << stopped.err;

  Outcome once = loom({"worker", "--once"});
  EXPECT_EQ(once.exitCode, 0) << once.out << once.err;
  EXPECT_NE(once.out.find("old: parked (approval)"), std::string::npos) << once.out;
}

}  // namespace
}  // namespace loom::testing
