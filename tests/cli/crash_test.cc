// The crash test: `loom run example.steps` is SIGKILLed at several points, then `loom resume`
// in a fresh process finishes the run. Every step's effect appends its step id to a witness
// file, so the file shows what ran: every step exactly once, except at most the one step that
// was in flight when the process died (DESIGN.md §5, exactly-once recording).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <thread>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

struct CrashCase {
  const char* name;
  int steps;
  int sleepMs;
  int killAfterLines;  // SIGKILL once the witness file has this many lines
  const char* durability;
};

void PrintTo(const CrashCase& c, std::ostream* os) { *os << c.name; }

class CrashTest : public ::testing::TestWithParam<CrashCase> {};

TEST_P(CrashTest, ResumeAfterSigkillRunsEveryStepOnceButTheOneInFlight) {
  const CrashCase& c = GetParam();
  TempDir dir;
  std::string home = dir / "home";
  std::string witness = dir / "witness.txt";
  std::string id = std::string("crash-") + c.name;
  std::string input = "{\"steps\":" + std::to_string(c.steps) +
                      ",\"sleepMs\":" + std::to_string(c.sleepMs) + ",\"witness\":\"" + witness +
                      "\"}";

  Child run({"--home", home, "--durability", c.durability, "run", "example.steps", "--id", id,
             "--input", input},
            dir);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (readLines(witness).size() < static_cast<std::size_t>(c.killAfterLines)) {
    ASSERT_FALSE(run.exited()) << "the run ended before it could be killed";
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the run made no progress";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  run.kill(SIGKILL);
  Outcome killed = run.wait();
  ASSERT_EQ(killed.termSignal, SIGKILL) << "the run ended on its own: " << killed.out;

  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  json::value executions = listed.json();
  ASSERT_EQ(executions.as_array().size(), 1u);
  EXPECT_EQ(executions.at(0).at("status"), "orphaned") << "its process is gone: safe to resume";
  EXPECT_EQ(executions.at(0).at("owner").at("pid"), run.pid());
  std::size_t linesAtKill = readLines(witness).size();

  Outcome resumed =
      runLoom({"--home", home, "--durability", c.durability, "resume", id, "--json"}, dir);
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  json::value result = resumed.json();
  EXPECT_EQ(result.at("status"), "completed");
  EXPECT_EQ(result.at("output"), c.steps);
  int64_t replayed = result.at("replayedSteps").to_number<int64_t>();
  int64_t ran = result.at("effectsRun").to_number<int64_t>();
  EXPECT_EQ(replayed + ran, c.steps);
  // The step in flight may have written its line without its STEP_COMPLETED being committed.
  EXPECT_GE(replayed + 1, static_cast<int64_t>(linesAtKill));
  EXPECT_LE(replayed, static_cast<int64_t>(linesAtKill));

  std::map<std::string, int> seen;
  std::vector<std::string> lines = readLines(witness);
  for (const auto& line : lines) ++seen[line];
  int repeated = 0;
  for (int i = 1; i <= c.steps; ++i) {
    std::string step = "step-" + std::to_string(i);
    ASSERT_TRUE(seen.contains(step)) << step << " never ran";
    EXPECT_LE(seen[step], 2) << step << " ran " << seen[step] << " times";
    if (seen[step] == 2) {
      ++repeated;
      EXPECT_EQ(i, replayed + 1) << "only the step in flight at the kill may run twice";
    }
  }
  EXPECT_LE(repeated, 1);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(c.steps)) << "unexpected witness lines";
  EXPECT_EQ(lines.size(), static_cast<std::size_t>(c.steps + repeated));

  Outcome again = runLoom({"--home", home, "resume", id, "--json"}, dir);
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(again.json().at("effectsRun"), 0) << "an ended execution runs nothing";
  EXPECT_EQ(readLines(witness).size(), lines.size());
}

INSTANTIATE_TEST_SUITE_P(
    KillPoints, CrashTest,
    ::testing::Values(CrashCase{"afterFirstStep", 12, 60, 1, "full"},
                      CrashCase{"afterHalf", 12, 60, 6, "full"},
                      CrashCase{"nearTheEnd", 12, 120, 11, "full"},
                      CrashCase{"normalDurability", 12, 60, 6, "normal"},
                      // No sleep: the kill lands anywhere, often between an effect's witness
                      // line and its commit, so that step runs again on resume.
                      CrashCase{"anywhereNoSleep", 200, 0, 80, "full"}),
    [](const ::testing::TestParamInfo<CrashCase>& info) { return info.param.name; });

}  // namespace
}  // namespace loom::testing
