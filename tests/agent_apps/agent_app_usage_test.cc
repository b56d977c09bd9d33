// Token and cost totals as a user meets them (docs/observability.md): a scripted model that
// reports usage per turn and a price in the app; `loom run`, `loom ls`, `loom state` and
// `loom usage` show the totals, which a SIGKILL and a resume neither double nor lose.
#include <signal.h>

#include <sstream>

#include "agent_app_fixture.h"

namespace loom::testing {
namespace {

constexpr int kPages = 4;  // tool turns; the answer is one more model turn

// Each turn reports 1000 tokens in (400 of them cached) and 50 out; the price makes a turn
// 600 x $2/M + 400 x $1/M + 50 x $8/M = $0.0016 + $0.0004 = $0.002.
std::string usageScript() {
  return R"({"generate": {"turns": )" + std::to_string(kPages) +
         R"(, "toolCalls": [{"name": "fetch_report", "arguments": {"page": "{turn}"}}],
             "answer": "Read every page.",
             "usage": {"inputTokens": 1000, "outputTokens": 50, "cachedInputTokens": 400}}})";
}
const std::string kPrices =
    "\n[observability.prices.scripted]\ninput = 2\noutput = 8\ncachedInput = 1\n";

class AgentAppUsageTest : public AgentAppTest {
 protected:
  static void expectTotals(const json::value& usage, int turns) {
    EXPECT_EQ(usage.at("inputTokens").as_int64(), 1000 * turns) << json::toText(usage);
    EXPECT_EQ(usage.at("outputTokens").as_int64(), 50 * turns) << json::toText(usage);
    EXPECT_EQ(usage.at("cachedInputTokens").as_int64(), 400 * turns) << json::toText(usage);
    EXPECT_EQ(usage.at("modelTurns").as_int64(), turns) << json::toText(usage);
    EXPECT_NEAR(usage.at("costUsd").as_double(), 0.002 * turns, 1e-9) << json::toText(usage);
  }
};

TEST_F(AgentAppUsageTest, RunLsStateAndUsageShowTheTotalsTheStepsRecorded) {
  std::string app = writeApp(usageScript(), fetchReportTool(), kPrices);
  Outcome run = loom({"run", app, "--id", "u", "--subject", "ada", "--json"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  expectTotals(run.json().at("usage"), kPages + 1);
  Outcome text = loom({"resume", "u"});
  EXPECT_NE(text.out.find("usage:    5250 tokens (5000 in, 250 out, 2000 cached) in 5 model "
                          "turns, $0.0100"),
            std::string::npos)
      << text.out;

  json::array events = this->events("u");
  int withUsage = 0;
  for (const auto& e : events) {
    if (e.at("type") != "STEP_COMPLETED" || !e.as_object().contains("usage")) continue;
    ++withUsage;
    EXPECT_EQ(e.at("usage").at("model"), "scripted");
    EXPECT_NEAR(e.at("usage").at("costUsd").as_double(), 0.002, 1e-12) << "priced when recorded";
  }
  EXPECT_EQ(withUsage, kPages + 1) << "only model steps record usage";

  Outcome ls = loom({"ls", "--json"});
  ASSERT_EQ(ls.exitCode, 0) << ls.err;
  expectTotals(ls.json().at(0).at("usage"), kPages + 1);
  Outcome table = loom({"ls"});
  EXPECT_NE(table.out.find("USAGE"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("5.2k $0.010"), std::string::npos) << table.out;
  Outcome state = loom({"state", "u", "--json"});
  ASSERT_EQ(state.exitCode, 0) << state.err;
  expectTotals(state.json().at("usage"), kPages + 1);

  ASSERT_EQ(loom({"run", app, "--id", "v", "--subject", "bob"}).exitCode, 0);
  for (const std::string by : {"workflow", "subject", "model"}) {
    Outcome usage = loom({"usage", "--by", by, "--json"});
    ASSERT_EQ(usage.exitCode, 0) << usage.err;
    json::value report = usage.json();
    expectTotals(report.at("total"), 2 * (kPages + 1));
    EXPECT_EQ(report.at("total").at("runs"), 2) << usage.out;
    EXPECT_EQ(report.at("groups").as_array().size(), by == "subject" ? 2U : 1U) << usage.out;
  }
  Outcome bySubject = loom({"usage", "--by", "subject"});
  EXPECT_NE(bySubject.out.find("SUBJECT"), std::string::npos) << bySubject.out;
  EXPECT_NE(bySubject.out.find("ada"), std::string::npos) << bySubject.out;
  EXPECT_NE(bySubject.out.find("total"), std::string::npos) << bySubject.out;
  Outcome none = loom({"usage", "--since", "2999-01-01T00:00:00.000Z"});
  EXPECT_NE(none.out.find("no run recorded model usage"), std::string::npos) << none.out;
}

TEST_F(AgentAppUsageTest, ASigkilledRunResumedCountsEachTurnOnce) {
  std::string app = writeApp(usageScript(), fetchReportTool(", \"--delay\", \"0.1\""), kPrices);
  runAndKillAfter(app, "c", 2);
  if (HasFatalFailure()) return;
  Outcome resumed = loom({"resume", "c", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "completed");
  expectTotals(resumed.json().at("usage"), kPages + 1);
  Outcome again = loom({"resume", "c", "--json"});  // an ended run replays nothing new
  expectTotals(again.json().at("usage"), kPages + 1);
}

TEST_F(AgentAppUsageTest, AScriptWithMalformedUsageIsRefusedNamingTheField) {
  std::string app = writeApp(
      R"({"turns": [{"answer": "hi", "usage": {"inputTokens": -3, "outputTokens": 1}}]})",
      fetchReportTool());
  Outcome run = loom({"run", app, "--id", "bad"});
  EXPECT_NE(run.exitCode, 0);
  EXPECT_NE(run.err.find("script.turns[0].usage.inputTokens must be a whole number"),
            std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

// agent.budget: each turn spends 1050 tokens; 2000 allows two turns, and the third parks.
class AgentAppBudgetTest : public AgentAppUsageTest {
 protected:
  std::string budgetApp(const std::string& budget, const std::string& toolOptions = "") {
    return writeApp(usageScript(), fetchReportTool(toolOptions),
                    kPrices + "\n[agent.budget]\n" + budget + "\n");
  }
};

TEST_F(AgentAppBudgetTest, ARunOverItsTokenBudgetParksAcrossACrashUntilARaise) {
  std::string app = budgetApp("maxTokens = 2000", ", \"--delay\", \"0.1\"");
  runAndKillAfter(app, "b", 1);  // killed in turn 1's tool call
  if (HasFatalFailure()) return;
  Outcome resumed = loom({"resume", "b", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  json::value r = resumed.json();
  EXPECT_EQ(r.at("status"), "parked") << resumed.out;
  EXPECT_EQ(r.at("parkReason"), "budgetExceeded") << resumed.out;
  EXPECT_EQ(r.at("waitingFor"), "budget:research#turn:3:model") << resumed.out;
  expectTotals(r.at("usage"), 2);
  json::array log = events("b");
  EXPECT_NE(json::toText(log.back()).find("maxTokens 2000: 2100 tokens spent"), std::string::npos)
      << json::toText(log.back());

  Outcome again = loom({"resume", "b", "--json"});  // a crash and a resume change nothing
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(again.json().at("parkReason"), "budgetExceeded");
  EXPECT_EQ(again.json().at("modelCalls"), 0) << "a model call ran again";
  expectTotals(again.json().at("usage"), 2);
  EXPECT_EQ(events("b").size(), log.size()) << "the resume wrote to the log";

  Outcome bad = loom({"signal", "b", "budget:research#turn:3:model", R"({"maxTokens": -1})"});
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
  EXPECT_NE(bad.err.find("maxTokens must be a whole number"), std::string::npos) << bad.err;
  EXPECT_EQ(events("b").size(), log.size()) << "a refused raise was recorded";

  Outcome raised = loom({"signal", "b", "budget:research#turn:3:model", R"({"maxTokens": 100000})",
                         "--json"});
  ASSERT_EQ(raised.exitCode, 0) << raised.err;
  EXPECT_EQ(raised.json().at("status"), "completed") << raised.out;
  expectTotals(raised.json().at("usage"), kPages + 1);
  Outcome replayed = loom({"resume", "b", "--json"});
  EXPECT_EQ(replayed.json().at("status"), "completed");
}

TEST_F(AgentAppBudgetTest, OnExceededFailFailsTheRunNamingTheLimit) {
  std::string app = budgetApp("maxToolCalls = 2\nonExceeded = \"fail\"");
  Outcome run = loom({"run", app, "--id", "f", "--json"});
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(run.json().at("status"), "failed") << run.out;
  EXPECT_NE(json::toText(run.json().at("error")).find("maxToolCalls 2: 2 tool calls run"),
            std::string::npos)
      << run.out;
  Outcome check = loom({"config", "check", budgetApp("maxTokens = -5")});
  EXPECT_NE(check.exitCode, 0);
  EXPECT_NE((check.out + check.err).find("agent.budget.maxTokens"), std::string::npos)
      << check.out << check.err;
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

// Runs `command` on a terminal of its own (util-linux `script` gives it a pty) and returns
// everything the terminal showed.
std::string onATerminal(const std::string& command) {
  std::string line = "script -qec '" + command + "' /dev/null 2>&1";
  FILE* pipe = popen(line.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  pclose(pipe);
  return out;
}

TEST_F(AgentAppUsageTest, OnATerminalARunShowsALiveLineThatQuietTurnsOff) {
  std::string script = usageScript();
  script.insert(1, R"("latencyMs": 150, )");  // slow turns: the line is redrawn between them
  std::string app = writeApp(script, fetchReportTool(), kPrices);
  const std::string loom = loomBinary() + " --home " + home_;
  std::string shown = onATerminal(loom + " run " + app + " --id t");
  EXPECT_NE(shown.find("\rloom: t · turn 2"), std::string::npos) << shown;
  EXPECT_NE(shown.find("tokens · "), std::string::npos) << shown;
  EXPECT_NE(shown.find("status:   completed"), std::string::npos) << shown;
  std::string quiet = onATerminal(loom + " --quiet run " + app + " --id q");
  EXPECT_EQ(quiet.find("\rloom: q"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("status:   completed"), std::string::npos) << quiet;
  Outcome redirected = this->loom({"run", app, "--id", "r"});  // stderr is a pipe here
  EXPECT_EQ(redirected.err.find('\r'), std::string::npos) << redirected.err;
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

std::vector<int64_t> seqsOf(const std::string& followed) {
  std::vector<int64_t> seqs;
  std::istringstream lines(followed);
  for (std::string line; std::getline(lines, line);) seqs.push_back(std::stoll(line));
  return seqs;
}

// `loom follow` from another process while a run runs, and again after it stopped: every event
// once, in order; `--after` goes on where a follower left off.
TEST_F(AgentAppUsageTest, FollowPrintsEveryEventOnceAsItIsJournaledAndResumesAfterASeq) {
  std::string app = writeApp(usageScript(), fetchReportTool(", \"--delay\", \"0.1\""), kPrices);
  ASSERT_EQ(loom({"run", app, "--id", "f", "--submit"}).exitCode, 0);
  Child follower({"--home", home_, "follow", "f"}, dir_, env());
  Child worker({"--home", home_, "worker", "--once"}, dir_, env());
  Outcome ran = worker.wait();
  ASSERT_EQ(ran.exitCode, 0) << ran.out << ran.err;
  Outcome followed = follower.wait(30'000);
  ASSERT_EQ(followed.exitCode, 0) << followed.err;
  const int64_t events = static_cast<int64_t>(this->events("f").size());
  std::vector<int64_t> expected(events);
  for (int64_t i = 0; i < events; ++i) expected[i] = i + 1;
  EXPECT_EQ(seqsOf(followed.out), expected) << followed.out;
  EXPECT_NE(followed.out.find("EXECUTION_COMPLETED"), std::string::npos) << followed.out;

  Outcome rest = loom({"follow", "f", "--after", "3", "--json"});
  ASSERT_EQ(rest.exitCode, 0) << rest.err;
  std::istringstream lines(rest.out);
  int64_t next = 4;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(json::parse(line, "a followed event").at("seq").as_int64(), next++) << line;
  }
  EXPECT_EQ(next, events + 1) << rest.out;
  Outcome unknown = loom({"follow", "nope"});
  EXPECT_NE(unknown.exitCode, 0);
  EXPECT_NE(unknown.err.find("no execution 'nope'"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace loom::testing
