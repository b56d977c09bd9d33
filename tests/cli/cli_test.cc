// Behaviours of the `loom` command line, through the real binary: the --json shapes, exit
// codes and error lines, --version, and docs/cli.md being what `loom help-markdown` prints.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "loom/kernel/version.h"
#include "support/loom_process.h"

namespace loom::testing {
namespace {

std::set<std::string> keys(const json::value& v) {
  std::set<std::string> out;
  for (const auto& member : v.as_object()) out.insert(std::string(member.key()));
  return out;
}

// One stderr line "loom: ...", containing `text`.
void expectErrorLine(const Outcome& o, std::string_view text) {
  EXPECT_EQ(o.err.rfind("loom: ", 0), 0u) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_NE(o.err.find(text), std::string::npos) << o.err;
}

class CliTest : public ::testing::Test {
 protected:
  Outcome loom(std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home_});
    return runLoom(args, dir_);
  }
  TempDir dir_;
  std::string home_ = dir_ / "home";
};

TEST_F(CliTest, RunJsonIsOneObjectWithIdStatusOutput) {
  Outcome o = loom({"run", "example.steps", "--id", "r1", "--input", R"({"steps": 3})", "--json"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  json::value v = o.json();
  EXPECT_EQ(keys(v), (std::set<std::string>{"id", "status", "output"}));
  EXPECT_EQ(v.at("id"), "r1");
  EXPECT_EQ(v.at("status"), "completed");
  EXPECT_EQ(v.at("output"), 3);
  EXPECT_EQ(o.err, "");
}

TEST_F(CliTest, HumanRunPrintsIdAndStatus) {
  Outcome o = loom({"run", "example.steps", "--input", R"({"steps": 1})"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_NE(o.out.find("id:"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("completed"), std::string::npos) << o.out;
}

TEST_F(CliTest, ResumeJsonAddsReplayCounts) {
  ASSERT_EQ(loom({"run", "example.steps", "--id", "r1", "--input", R"({"steps": 2})"}).exitCode, 0);
  Outcome o = loom({"resume", "r1", "--json"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  json::value v = o.json();
  EXPECT_EQ(keys(v),
            (std::set<std::string>{"id", "status", "output", "replayedSteps", "effectsRun",
                                   "replayContentStoreCalls"}));
  EXPECT_EQ(v.at("output"), 2);
  EXPECT_EQ(v.at("replayContentStoreCalls"), 0);
}

TEST_F(CliTest, LsJsonListsEveryExecutionWithItsSizes) {
  ASSERT_EQ(loom({"run", "example.steps", "--id", "a", "--subject", "alice", "--input",
                  R"({"steps": 2})"})
                .exitCode,
            0);
  ASSERT_EQ(loom({"run", "example.approval", "--id", "b"}).exitCode, 0);
  Outcome o = loom({"ls", "--json"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  json::value v = o.json();
  ASSERT_EQ(v.as_array().size(), 2u);
  const std::set<std::string> expected = {"id",         "workflow",  "status",  "subject",
                                          "steps",      "logBytes",  "stateBytes",
                                          "startedAt",  "endedAt",   "codeVersion"};
  EXPECT_EQ(keys(v.at(0)), expected);
  std::set<std::string> parked = expected;
  parked.insert("parkReason");  // a parked run says why
  parked.insert("waitingFor");  // and for which signal
  EXPECT_EQ(keys(v.at(1)), parked);
  EXPECT_EQ(v.at(1).at("waitingFor"), "approve");
  EXPECT_EQ(v.at(1).at("parkReason"), "signal");  // example.approval awaits a signal
  const auto& a = v.at(0);
  EXPECT_EQ(a.at("id"), "a");
  EXPECT_EQ(a.at("workflow"), "example.steps");
  EXPECT_EQ(a.at("status"), "completed");
  EXPECT_EQ(a.at("subject"), "alice");
  EXPECT_EQ(a.at("steps"), 2);
  // The code the run started on: this program's build (ADR 0029).
  EXPECT_EQ(std::string(a.at("codeVersion").as_string()).substr(0, 6), "build:");
  EXPECT_GT(a.at("logBytes").to_number<int64_t>(), 0);
  EXPECT_GT(a.at("stateBytes").to_number<int64_t>(), 0);
  EXPECT_TRUE(a.at("startedAt").is_string());
  EXPECT_EQ(a.at("startedAt").as_string().back(), 'Z') << "RFC 3339 UTC";
  EXPECT_TRUE(a.at("endedAt").is_string());
  const auto& b = v.at(1);
  EXPECT_EQ(b.at("status"), "parked");
  EXPECT_TRUE(b.at("subject").is_null());
  EXPECT_TRUE(b.at("endedAt").is_null());

  Outcome human = loom({"ls"});
  ASSERT_EQ(human.exitCode, 0) << human.err;
  EXPECT_EQ(human.out.rfind("ID", 0), 0u) << human.out;
  EXPECT_NE(human.out.find("example.approval"), std::string::npos) << human.out;
}

TEST_F(CliTest, LsSaysWhyParkedRunsWaitFiltersAndFits120Columns) {
  ASSERT_EQ(loom({"run", "example.approval", "--id", "waits-for-a-signal"}).exitCode, 0);
  ASSERT_EQ(loom({"run", "example.timer", "--id", "sleeps", "--input", R"({"sleepMs": 3600000})"})
                .exitCode,
            0);
  ASSERT_EQ(loom({"run", "example.steps", "--id", "done", "--subject", "a-long-subject-name",
                  "--input", R"({"steps": 1})"})
                .exitCode,
            0);
  Outcome human = loom({"ls"});
  ASSERT_EQ(human.exitCode, 0) << human.err;
  EXPECT_NE(human.out.find("parked: signal approve"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("parked: timer "), std::string::npos) << human.out;
  std::istringstream lines(human.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 120u) << line;
  }
  Outcome parked = loom({"ls", "--status", "parked", "--json"});
  ASSERT_EQ(parked.exitCode, 0) << parked.err;
  EXPECT_EQ(parked.json().as_array().size(), 2u) << parked.out;
  Outcome timer = loom({"ls", "--workflow", "example.timer", "--json"});
  ASSERT_EQ(timer.json().as_array().size(), 1u) << timer.out;
  EXPECT_EQ(timer.json().at(0).at("parkReason"), "timer");
  Outcome subject = loom({"ls", "--subject", "a-long-subject-name"});
  EXPECT_NE(subject.out.find("done"), std::string::npos) << subject.out;
  EXPECT_EQ(subject.out.find("sleeps"), std::string::npos) << subject.out;
  Outcome none = loom({"ls", "--status", "failed"});
  EXPECT_NE(none.out.find("no executions match"), std::string::npos) << none.out;
  EXPECT_EQ(loom({"ls", "--status", "asleep"}).exitCode, 2);
}

// Timers fire only while a worker runs: `loom run` says so when it parks on one, and `loom ls`
// notes due work that no process has taken.
TEST_F(CliTest, DueWorkWithNoWorkerIsNoted) {
  Outcome run = loom({"run", "example.timer", "--id", "nap", "--input", R"({"sleepMs": 300})"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("the timer fires only while a worker runs"), std::string::npos)
      << run.out;
  EXPECT_EQ(loom({"ls"}).err, "") << "not due yet";
  std::this_thread::sleep_for(std::chrono::milliseconds(2'600));
  Outcome due = loom({"ls"});
  EXPECT_NE(due.err.find("note: 1 run is due (a timer, an approval deadline or a retry) and no "
                         "process has taken it"),
            std::string::npos)
      << due.err;
  ASSERT_EQ(loom({"worker", "--once"}).exitCode, 0);
  EXPECT_EQ(loom({"ls"}).err, "") << "taken and finished";
}

TEST_F(CliTest, LogJsonIsTheStoredEvents) {
  ASSERT_EQ(loom({"run", "example.steps", "--id", "l", "--input", R"({"steps": 2})"}).exitCode, 0);
  Outcome o = loom({"log", "l", "--json"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  json::value parsed = o.json();
  const auto& events = parsed.as_array();
  ASSERT_EQ(events.size(), 4u);  // started, two steps, completed
  EXPECT_EQ(events[0].at("seq"), 1);
  EXPECT_EQ(events[0].at("type"), "EXECUTION_STARTED");
  EXPECT_EQ(events[1].at("stepId"), "step-1");
  EXPECT_EQ(events[1].at("effectId"), "example.step");
  EXPECT_EQ(events[1].at("taskKind"), "flow");
  EXPECT_EQ(events[3].at("type"), "EXECUTION_COMPLETED");
  Outcome human = loom({"log", "l"});
  ASSERT_EQ(human.exitCode, 0) << human.err;
  EXPECT_EQ(std::count(human.out.begin(), human.out.end(), '\n'), 4) << human.out;
}

TEST_F(CliTest, ExistingIdIsRefusedWithResumeHint) {
  ASSERT_EQ(loom({"run", "example.approval", "--id", "dup"}).exitCode, 0);
  Outcome o = loom({"run", "example.approval", "--id", "dup"});
  EXPECT_EQ(o.exitCode, 1);
  expectErrorLine(o, "loom resume dup");
}

TEST_F(CliTest, MalformedInputJsonIsAUsageError) {
  Outcome o = loom({"run", "example.steps", "--input", "{steps: 3}"});
  EXPECT_EQ(o.exitCode, 2);
  expectErrorLine(o, "--input");
  EXPECT_FALSE(std::filesystem::exists(home_)) << "nothing is created for a bad command line";
}

TEST_F(CliTest, InvalidInputFailsTheRunNamingTheField) {
  Outcome o = loom({"run", "example.steps", "--input", R"({"steps": 0})", "--json"});
  EXPECT_EQ(o.exitCode, 1);
  json::value v = o.json();
  EXPECT_EQ(v.at("status"), "failed");
  EXPECT_EQ(v.at("error").at("code"), "invalidArgument");
  expectErrorLine(o, "\"steps\"");
}

TEST_F(CliTest, UnknownWorkflowListsTheRegisteredOnes) {
  Outcome o = loom({"run", "example.nope"});
  EXPECT_EQ(o.exitCode, 1);
  expectErrorLine(o, "example.nope");
  EXPECT_NE(o.err.find("example.approval, example.steps"), std::string::npos) << o.err;
}

TEST_F(CliTest, UnknownFlagAndMissingArgumentAreUsageErrors) {
  Outcome flag = loom({"ls", "--colour"});
  EXPECT_EQ(flag.exitCode, 2);
  expectErrorLine(flag, "loom ls --help");
  Outcome missing = loom({"resume"});
  EXPECT_EQ(missing.exitCode, 2);
  expectErrorLine(missing, "loom resume --help");
  Outcome none = loom({});
  EXPECT_EQ(none.exitCode, 2);
  expectErrorLine(none, "loom --help");
  Outcome durability = loom({"--durability", "fast", "run", "example.approval"});
  EXPECT_EQ(durability.exitCode, 2);
  expectErrorLine(durability, "--durability");
}

TEST_F(CliTest, UnknownExecutionAndMissingHomeSayWhatToDo) {
  Outcome noHome = loom({"ls"});
  EXPECT_EQ(noHome.exitCode, 1);
  expectErrorLine(noHome, "--home");
  ASSERT_EQ(loom({"run", "example.approval"}).exitCode, 0);
  Outcome noRun = loom({"log", "nope"});
  EXPECT_EQ(noRun.exitCode, 1);
  expectErrorLine(noRun, "loom ls");
  Outcome noResume = loom({"resume", "nope"});
  EXPECT_EQ(noResume.exitCode, 1);
  expectErrorLine(noResume, "loom ls");
}

TEST_F(CliTest, GlobalOptionsMayFollowTheSubcommandAndHomeMayComeFromLoomHome) {
  Outcome o = runLoom({"run", "example.approval", "--id", "e1", "--home", home_}, dir_);
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(home_) / "loom.db"));
  Outcome fromEnv = runLoom({"ls", "--json"}, dir_, {"LOOM_HOME=" + home_});
  ASSERT_EQ(fromEnv.exitCode, 0) << fromEnv.err;
  EXPECT_EQ(fromEnv.json().at(0).at("id"), "e1");
}

TEST_F(CliTest, VersionPrintsKernelAbiAndEventSchema) {
  Outcome o = loom({"--version"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_NE(o.out.find("KERNEL_ABI " + std::to_string(KERNEL_ABI)), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("EVENT_SCHEMA " + std::to_string(EVENT_SCHEMA)), std::string::npos) << o.out;
}

TEST_F(CliTest, RunHelpExplainsDurabilityAndListsWorkflows) {
  Outcome o = loom({"run", "--help"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_NE(o.out.find("power loss"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("example.steps"), std::string::npos) << o.out;
  Outcome root = loom({"--help"});
  EXPECT_NE(root.out.find("Exit codes"), std::string::npos) << root.out;
  EXPECT_EQ(root.out.find("help-markdown"), std::string::npos) << "it is hidden";
}

TEST_F(CliTest, DocsCliMdIsUpToDate) {
  Outcome o = loom({"help-markdown"});
  ASSERT_EQ(o.exitCode, 0) << o.err;
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/docs/cli.md", std::ios::binary);
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), o.out)
      << "docs/cli.md is stale; regenerate it: ./build/release/loom help-markdown > docs/cli.md";
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

// What an operator's log file gets when stderr is not a terminal: the results and warnings,
// with no carriage return, no escape and no progress padding (issue "See what agents do and
// spend", point 5).
TEST_F(CliTest, RedirectedOutputOfOperatorCommandsHoldsNoControlCharacters) {
  const std::string app = std::string(LOOM_SOURCE_DIR) + "/examples/agents/claim-check.toml";
  ASSERT_EQ(loom({"run", app, "--id", "c", "--subject", "ada"}).exitCode, 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"sweep"}, {"sweep", "--dry-run"}, {"export", "ada"},
        {"ls"}, {"usage"}, {"upgrade", "--all", "--to-current"}, {"replay-check"}}) {
    Outcome o = loom(args);
    for (const std::string* text : {&o.out, &o.err}) {
      for (char c : *text) {
        EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n')
            << "loom " << args[0] << " wrote control character " << int(c) << ":\n"
            << *text;
      }
    }
  }
}

}  // namespace
}  // namespace loom::testing
