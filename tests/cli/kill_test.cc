// The kill switch across processes: `loom kill example.step` in one process stops a running
// `loom run example.steps` in another (it parks, reason effectStopped, within a second), and
// `loom unkill` + `loom resume` complete it with every step run once. Also the kill/unkill/
// killed output shapes and usage errors.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

class KillTest : public ::testing::Test {
 protected:
  Outcome loom(std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home_});
    return runLoom(args, dir_);
  }
  std::vector<std::string> stopIds(const json::value& v) {
    std::vector<std::string> ids;
    for (const auto& s : v.at("stops").as_array()) ids.emplace_back(s.at("effectId").as_string());
    return ids;
  }
  TempDir dir_;
  std::string home_ = dir_ / "home";
};

TEST_F(KillTest, KillFromAnotherProcessParksTheRunAndUnkillPlusResumeCompletesIt) {
  std::string witness = dir_ / "witness.txt";
  Child run({"--home", home_, "run", "example.steps", "--id", "k", "--json", "--input",
             R"({"steps": 30, "sleepMs": 100, "witness": ")" + witness + "\"}"},
            dir_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (readLines(witness).size() < 3) {
    ASSERT_FALSE(run.exited()) << "the run ended before it could be stopped";
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Outcome killed = loom({"kill", "example.step", "--json"});
  ASSERT_EQ(killed.exitCode, 0) << killed.err;
  EXPECT_EQ(killed.json().at("changed"), true);
  EXPECT_EQ(stopIds(killed.json()), std::vector<std::string>{"example.step"});
  auto stoppedAt = std::chrono::steady_clock::now();
  Outcome parked = run.wait();
  // Seen within a second: at most the step in flight and ~10 more of 100 ms ran meanwhile.
  EXPECT_LT(std::chrono::steady_clock::now() - stoppedAt, std::chrono::milliseconds(1500));
  ASSERT_EQ(parked.exitCode, 0) << "a parked run exits 0: " << parked.err;
  json::value result = parked.json();
  EXPECT_EQ(result.at("status"), "parked");
  std::size_t ranBeforeResume = readLines(witness).size();
  EXPECT_LT(ranBeforeResume, 30u);

  Outcome stillStopped = loom({"resume", "k", "--json"});
  ASSERT_EQ(stillStopped.exitCode, 0) << stillStopped.err;
  EXPECT_EQ(stillStopped.json().at("status"), "parked") << "the stop is still set";
  EXPECT_EQ(readLines(witness).size(), ranBeforeResume) << "a stopped effect does not run";

  Outcome listed = loom({"killed", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  EXPECT_EQ(stopIds(listed.json()), std::vector<std::string>{"example.step"});
  Outcome unkilled = loom({"unkill", "example.step", "--json"});
  ASSERT_EQ(unkilled.exitCode, 0) << unkilled.err;
  EXPECT_EQ(unkilled.json().at("changed"), true);
  EXPECT_TRUE(unkilled.json().at("stops").as_array().empty());

  Outcome resumed = loom({"resume", "k", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  json::value done = resumed.json();
  EXPECT_EQ(done.at("status"), "completed");
  EXPECT_EQ(done.at("output"), 30);
  std::vector<std::string> lines = readLines(witness);
  ASSERT_EQ(lines.size(), 30u) << "every step ran exactly once";
  for (int i = 1; i <= 30; ++i) EXPECT_EQ(lines[i - 1], "step-" + std::to_string(i));
}

TEST_F(KillTest, KillAllStopsEveryEffectUntilUnkillAll) {
  ASSERT_EQ(loom({"run", "example.approval", "--id", "a"}).exitCode, 0);  // creates the home
  Outcome all = loom({"kill", "--all"});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  EXPECT_NE(all.out.find("stopped every effect"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("within a second"), std::string::npos) << all.out;
  Outcome run = loom({"run", "example.steps", "--id", "s", "--input", R"({"steps": 2})"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("parked (effectStopped"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("loom unkill"), std::string::npos) << run.out;
  Outcome named = loom({"unkill", "example.step"});
  ASSERT_EQ(named.exitCode, 0) << named.err;
  EXPECT_NE(named.out.find("was not stopped by name"), std::string::npos) << named.out;
  EXPECT_NE(named.out.find("loom unkill --all"), std::string::npos) << named.out;
  Outcome list = loom({"kill", "--list"});
  ASSERT_EQ(list.exitCode, 0) << list.err;
  EXPECT_NE(list.out.find("* (every effect)"), std::string::npos) << list.out;
  Outcome lifted = loom({"unkill", "--all"});
  ASSERT_EQ(lifted.exitCode, 0) << lifted.err;
  EXPECT_NE(lifted.out.find("lifted 1 stop(s)"), std::string::npos) << lifted.out;
  Outcome none = loom({"killed"});
  EXPECT_EQ(none.out, "no effect is stopped\n");
  Outcome resumed = loom({"resume", "s", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "completed");
}

TEST_F(KillTest, SecondKillKeepsTheFirstAndUsageErrors) {
  ASSERT_EQ(loom({"run", "example.approval", "--id", "a"}).exitCode, 0);
  ASSERT_EQ(loom({"kill", "x", "--force"}).exitCode, 0);
  Outcome again = loom({"kill", "x", "--json"});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(again.json().at("changed"), false);
  EXPECT_EQ(loom({"kill"}).exitCode, 2);
  EXPECT_EQ(loom({"kill", "x", "--all"}).exitCode, 2);
  EXPECT_EQ(loom({"unkill", "--list"}).exitCode, 2) << "--list is not an unkill flag";
  Outcome noHome = runLoom({"--home", dir_ / "nowhere", "kill", "x"}, dir_);
  EXPECT_EQ(noHome.exitCode, 1);
  EXPECT_NE(noHome.err.find("--home"), std::string::npos) << noHome.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "nowhere")) << "kill creates no home";
}

}  // namespace
}  // namespace loom::testing
