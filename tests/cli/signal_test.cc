// Park, signal and resume across processes: `loom run example.approval` parks waiting for
// signal "approve"; `loom signal` in a new process records the signal and completes the run.
#include <gtest/gtest.h>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

TEST(SignalTest, ParkedRunIsCompletedBySignalFromAnotherProcess) {
  TempDir dir;
  std::string home = dir / "home";
  Outcome run = runLoom({"--home", home, "run", "example.approval", "--id", "a1", "--json"}, dir);
  ASSERT_EQ(run.exitCode, 0) << "a parked run exits 0: " << run.err;
  json::value parked = run.json();
  EXPECT_EQ(parked, json::parse(R"({"id":"a1","status":"parked","output":null,
                                    "waitingFor":"approve","parkReason":"signal"})",
                                "expected"));

  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  EXPECT_EQ(listed.json().at(0).at("status"), "parked");

  Outcome resumed = runLoom({"--home", home, "resume", "a1", "--json"}, dir);
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "parked") << "no signal yet: it parks again";

  Outcome signaled =
      runLoom({"--home", home, "signal", "a1", "approve", R"({"ok":true})", "--json"}, dir);
  ASSERT_EQ(signaled.exitCode, 0) << signaled.err;
  json::value done = signaled.json();
  EXPECT_EQ(done.at("status"), "completed");
  EXPECT_EQ(done.at("output"), json::parse(R"({"approval":{"ok":true}})", "expected"));
  EXPECT_EQ(done.at("replayedSteps"), 1) << "the step before the park replays";
  EXPECT_EQ(done.at("effectsRun"), 1) << "only the step after the signal runs";

  Outcome state = runLoom({"--home", home, "state", "a1", "--json"}, dir);
  ASSERT_EQ(state.exitCode, 0) << state.err;
  json::value folded = state.json();
  EXPECT_EQ(folded.at("status"), "completed");
  EXPECT_EQ(folded.at("signals"),
            json::parse(R"([{"name":"approve","payload":{"ok":true}}])", "expected"));

  Outcome late = runLoom({"--home", home, "signal", "a1", "approve", "true"}, dir);
  EXPECT_EQ(late.exitCode, 1);
  EXPECT_NE(late.err.find("takes no more signals"), std::string::npos) << late.err;
}

TEST(SignalTest, HumanRunSaysParkedAndHowToSignal) {
  TempDir dir;
  Outcome run = runLoom({"--home", dir / "home", "run", "example.approval", "--id", "h1"}, dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("h1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("parked"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("loom signal h1 approve"), std::string::npos) << run.out;
  EXPECT_EQ(run.err, "");
}

}  // namespace
}  // namespace loom::testing
