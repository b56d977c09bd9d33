// Run ownership on the real binary and home (docs/spec/leases.md): a `loom resume` of a run
// that is alive in another process is refused before it runs anything, naming that process;
// after a SIGKILL, `loom ls` shows the run orphaned and two resumes racing to take it over run
// nothing twice: one continues it, the other is refused naming the winner (or, coming after
// it, gets the recorded result). Every step's effect appends its step id to a witness file.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <thread>

#include "loom/util/clock.h"
#include "support/loom_process.h"

namespace loom::testing {
namespace {

std::string stepsInput(int steps, int sleepMs, const std::string& witness) {
  return "{\"steps\":" + std::to_string(steps) + ",\"sleepMs\":" + std::to_string(sleepMs) +
         ",\"witness\":\"" + witness + "\"}";
}

void waitForLines(const std::string& witness, std::size_t lines, Child& run) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (readLines(witness).size() < lines) {
    ASSERT_FALSE(run.exited()) << "the run ended before the test could act on it";
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the run made no progress";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::map<std::string, int> countLines(const std::string& witness) {
  std::map<std::string, int> seen;
  for (const auto& line : readLines(witness)) ++seen[line];
  return seen;
}

TEST(Leases, AResumeOfARunAliveInAnotherProcessIsRefusedNamingItsOwner) {
  TempDir dir;
  std::string home = dir / "home";
  std::string witness = dir / "witness.txt";
  // 4 steps of 500 ms: after the first, 1.5 s for `ls` and `resume` to start and meet the live
  // run, with margin for a loaded machine and sanitizer builds.
  Child run({"--home", home, "run", "example.steps", "--id", "alive", "--input",
             stepsInput(4, 500, witness)},
            dir);
  waitForLines(witness, 1, run);

  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  json::value row = listed.json().at(0);
  EXPECT_EQ(row.at("status"), "running");
  EXPECT_EQ(row.at("owner").at("pid"), run.pid());
  EXPECT_LT(row.at("owner").at("heartbeatAgeMs").to_number<int64_t>(), 15'000);

  Outcome second = runLoom({"--home", home, "resume", "alive"}, dir);
  EXPECT_EQ(second.exitCode, 1) << second.out;
  EXPECT_NE(second.err.find("is being run by process " + std::to_string(run.pid())),
            std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("nothing was run"), std::string::npos) << second.err;

  Outcome done = run.wait();
  ASSERT_EQ(done.exitCode, 0) << done.err;
  for (const auto& [step, times] : countLines(witness)) {
    EXPECT_EQ(times, 1) << step << " ran " << times << " times";
  }
  EXPECT_EQ(countLines(witness).size(), 4u);
}

TEST(Leases, TwoResumesRacingAfterASigkillRunNothingTwice) {
  constexpr int kRounds = 50;
  constexpr int kSteps = 3;
  TempDir dir;
  std::string home = dir / "home";
  int refusals = 0, twice = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::string id = "race-" + std::to_string(round);
    std::string witness = dir / (id + ".txt");
    Child run({"--home", home, "run", "example.steps", "--id", id, "--input",
               stepsInput(kSteps, 20, witness)},
              dir);
    waitForLines(witness, 1, run);
    run.kill(SIGKILL);
    ASSERT_EQ(run.wait().termSignal, SIGKILL);

    Child first({"--home", home, "resume", id, "--json"}, dir);
    Child second({"--home", home, "resume", id, "--json"}, dir);
    Outcome a = first.wait();
    Outcome b = second.wait();
    int completed = 0;
    for (const Outcome* o : {&a, &b}) {
      if (o->exitCode == 0) {
        EXPECT_EQ(o->json().at("status"), "completed") << o->out;
        ++completed;
      } else {
        EXPECT_EQ(o->exitCode, 1) << o->err;
        EXPECT_NE(o->error().find("is being run by process "), std::string::npos) << o->out;
        ++refusals;
      }
    }
    EXPECT_GE(completed, 1) << "round " << round << ": " << a.err << " | " << b.err;

    // Only the step in flight at the kill may have run twice; nothing ran a third time.
    std::map<std::string, int> seen = countLines(witness);
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kSteps)) << "round " << round;
    int repeated = 0;
    for (const auto& [step, times] : seen) {
      EXPECT_LE(times, 2) << "round " << round << ": " << step << " ran " << times << " times";
      repeated += times - 1;
    }
    EXPECT_LE(repeated, 1) << "round " << round << ": more than the step in flight ran again";
    twice += repeated;
  }
  // Both outcomes happen on a 2-core machine; what matters is that neither ran a step twice.
  RecordProperty("refusals", refusals);
  RecordProperty("inFlightRerun", twice);
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

// `loom run example.steps --submit` of `id`; the status it printed (or its error).
std::string submitSteps(const std::string& home, const std::string& id, const std::string& input,
                        const TempDir& dir) {
  Outcome o = runLoom(
      {"--home", home, "run", "example.steps", "--id", id, "--submit", "--json", "--input", input},
      dir);
  if (o.exitCode != 0) return o.err;
  return std::string(o.json().at("status").as_string());
}

// Waits until every execution of `home` has ended; false after 60 s.
bool allEnded(const std::string& home, const TempDir& dir) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
    bool ended = listed.exitCode == 0;
    json::value rows = ended ? listed.json() : json::array();
    for (const auto& row : rows.as_array()) {
      ended = ended && (row.at("status") == "completed" || row.at("status") == "failed");
    }
    if (ended) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(Workers, TwoWorkersRunSubmittedAndOrphanedRunsAndNothingTwice) {
  TempDir dir;
  std::string home = dir / "home";
  constexpr int kSubmitted = 6;
  for (int i = 0; i < kSubmitted; ++i) {
    std::string id = "sub-" + std::to_string(i);
    EXPECT_EQ(submitSteps(home, id, stepsInput(3, 30, dir / (id + ".txt")), dir), "submitted");
  }
  std::string crashedWitness = dir / "crashed.txt";
  {
    Child run({"--home", home, "run", "example.steps", "--id", "crashed", "--input",
               stepsInput(4, 50, crashedWitness)},
              dir);
    waitForLines(crashedWitness, 1, run);
    run.kill(SIGKILL);
    ASSERT_EQ(run.wait().termSignal, SIGKILL);
  }
  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  json::value rows = listed.json();
  for (const auto& row : rows.as_array()) {
    EXPECT_EQ(row.at("status"), row.at("id") == "crashed" ? "orphaned" : "submitted") << row;
  }

  Child first({"--home", home, "worker", "--concurrency", "2", "--poll-ms", "50"}, dir);
  Child second({"--home", home, "worker", "--concurrency", "2", "--poll-ms", "50"}, dir);
  EXPECT_TRUE(allEnded(home, dir)) << "the workers left runs unfinished";
  first.kill(SIGTERM);
  second.kill(SIGTERM);
  Outcome a = first.wait(), b = second.wait();
  EXPECT_EQ(a.exitCode, 0) << a.err;
  EXPECT_EQ(b.exitCode, 0) << b.err;
  // Each run's end is reported once, by the worker whose child recorded it.
  std::string both = a.out + b.out;
  auto reports = [&](const std::string& id) {
    std::string line = "worker: " + id + ": completed";
    int n = 0;
    for (auto at = both.find(line); at != std::string::npos; at = both.find(line, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(reports("crashed"), 1) << both;
  for (int i = 0; i < kSubmitted; ++i) {
    EXPECT_EQ(reports("sub-" + std::to_string(i)), 1) << both;
  }

  for (int i = 0; i < kSubmitted; ++i) {
    std::string id = "sub-" + std::to_string(i);
    std::map<std::string, int> seen = countLines(dir / (id + ".txt"));
    EXPECT_EQ(seen.size(), 3u) << id;
    for (const auto& [step, times] : seen) EXPECT_EQ(times, 1) << id << " " << step;
  }
  int repeated = 0;
  for (const auto& [step, times] : countLines(crashedWitness)) repeated += times - 1;
  EXPECT_LE(repeated, 1) << "more than the step in flight at the crash ran again";
  EXPECT_EQ(countLines(crashedWitness).size(), 4u);
}

TEST(Workers, ASigtermLetsTheRunsInFlightFinishWithinTheDrainDeadline) {
  TempDir dir;
  std::string home = dir / "home";
  std::string witness = dir / "w.txt";
  ASSERT_EQ(submitSteps(home, "slow", stepsInput(3, 300, witness), dir), "submitted");
  Child worker({"--home", home, "worker", "--poll-ms", "50", "--drain-seconds", "30"}, dir);
  waitForLines(witness, 1, worker);
  worker.kill(SIGTERM);
  Outcome stopped = worker.wait();
  EXPECT_EQ(stopped.exitCode, 0) << stopped.err;
  EXPECT_NE(stopped.out.find("worker: stopping: waiting up to 30 s for 1 run(s)"),
            std::string::npos)
      << stopped.out;
  EXPECT_NE(stopped.out.find("worker: slow: completed"), std::string::npos) << stopped.out;
  EXPECT_NE(stopped.out.find("worker: stopped (SIGTERM)"), std::string::npos) << stopped.out;
  EXPECT_EQ(readLines(witness).size(), 3u);
}

TEST(Workers, AnIdleWorkerSaysItStopsOnSigterm) {
  TempDir dir;
  std::string home = dir / "home";
  ASSERT_EQ(
      runLoom({"--home", home, "run", "example.steps", "--input", R"({"steps": 1})"}, dir).exitCode,
      0);
  Child worker({"--home", home, "worker", "--poll-ms", "50"}, dir);
  ASSERT_TRUE(worker.waitForOutput("worker: pid "));  // its signal handlers are in place
  worker.kill(SIGTERM);
  Outcome stopped = worker.wait();
  EXPECT_EQ(stopped.exitCode, 0) << stopped.err;
  EXPECT_NE(stopped.out.find("worker: stopping: no run in progress"), std::string::npos)
      << stopped.out;
  EXPECT_NE(stopped.out.find("worker: stopped (SIGTERM)"), std::string::npos) << stopped.out;
}

TEST(Workers, ADrainDeadlineOfZeroStopsTheRunAndLeavesItResumable) {
  TempDir dir;
  std::string home = dir / "home";
  std::string witness = dir / "w.txt";
  ASSERT_EQ(submitSteps(home, "cut", stepsInput(4, 300, witness), dir), "submitted");
  Child worker({"--home", home, "worker", "--poll-ms", "50", "--drain-seconds", "0"}, dir);
  waitForLines(witness, 1, worker);
  worker.kill(SIGTERM);
  EXPECT_EQ(worker.wait().exitCode, 0);
  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  EXPECT_EQ(listed.json().at(0).at("status"), "orphaned") << listed.out;
  Outcome resumed = runLoom({"--home", home, "resume", "cut", "--json"}, dir);
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "completed");
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

TEST(Cancel, AParkedRunEndsAtOnceAndStaysCancelled) {
  TempDir dir;
  std::string home = dir / "home";
  Outcome run = runLoom({"--home", home, "run", "example.approval", "--id", "p", "--json"}, dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  ASSERT_EQ(run.json().at("status"), "parked");
  Outcome cancelled =
      runLoom({"--home", home, "cancel", "p", "--reason", "not needed", "--json"}, dir);
  ASSERT_EQ(cancelled.exitCode, 0) << cancelled.err;
  EXPECT_EQ(cancelled.json().at("status"), "cancelled");
  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  EXPECT_EQ(listed.json().at(0).at("status"), "cancelled");
  Outcome resumed = runLoom({"--home", home, "resume", "p", "--json"}, dir);
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "cancelled");
  EXPECT_EQ(resumed.json().at("error").at("message"), "not needed");
  Outcome again = runLoom({"--home", home, "cancel", "p"}, dir);
  EXPECT_EQ(again.exitCode, 1);
  EXPECT_NE(again.err.find("has ended (cancelled); there is nothing to cancel"), std::string::npos)
      << again.err;
  Outcome reserved = runLoom({"--home", home, "signal", "p", "loom:cancel", "--force"}, dir);
  EXPECT_EQ(reserved.exitCode, 2) << reserved.err;
  EXPECT_NE(reserved.err.find("reserved for Loom"), std::string::npos) << reserved.err;
}

TEST(Cancel, ALiveRunStopsAtItsNextStepAndRecordsWhy) {
  TempDir dir;
  std::string home = dir / "home";
  std::string witness = dir / "w.txt";
  // Steps of 400 ms: the cancel (a process of its own, slow to start under a sanitizer on a
  // busy machine) lands well before the last step; with 150 ms it once came after.
  Child run({"--home", home, "run", "example.steps", "--id", "live", "--input",
             stepsInput(6, 400, witness)},
            dir);
  waitForLines(witness, 1, run);
  Outcome requested = runLoom({"--home", home, "cancel", "live", "--reason", "enough"}, dir);
  ASSERT_EQ(requested.exitCode, 0) << requested.err;
  EXPECT_NE(requested.out.find("cancel requested: live is running in another process"),
            std::string::npos)
      << requested.out;
  std::size_t linesAtCancel = readLines(witness).size();
  Outcome ended = run.wait();
  EXPECT_EQ(ended.exitCode, 0) << ended.err;
  EXPECT_NE(ended.out.find("status:   cancelled"), std::string::npos) << ended.out;
  EXPECT_NE(ended.out.find("reason:   \"enough\""), std::string::npos) << ended.out;
  EXPECT_LE(readLines(witness).size(), linesAtCancel + 1) << "steps started after the cancel";
  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  EXPECT_EQ(listed.json().at(0).at("status"), "cancelled");
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

TEST(Timers, AWorkerWakesATimerOnlyOnceItIsDue) {
  TempDir dir;
  std::string home = dir / "home";
  // 3 s: `ls` and the early worker start well before it is due, even on a loaded machine.
  Outcome run = runLoom({"--home", home, "run", "example.timer", "--id", "t", "--input",
                         "{\"sleepMs\":3000}", "--json"},
                        dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  json::value parked = run.json();
  EXPECT_EQ(parked.at("status"), "parked");
  EXPECT_EQ(parked.at("parkReason"), "timer");
  int64_t wakeAt = parseTimestamp(std::string(parked.at("wakeAt").as_string()));
  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  EXPECT_EQ(listed.json().at(0).at("wakeAt"), parked.at("wakeAt"));

  Outcome early = runLoom({"--home", home, "worker", "--once"}, dir);
  ASSERT_EQ(early.exitCode, 0) << early.err;
  bool woke = early.out.find("worker: t:") != std::string::npos;
  if (systemClock()->nowMillis() < wakeAt) {  // it ran wholly before the timer was due
    EXPECT_FALSE(woke) << "woke early: " << early.out;
  }
  if (woke) {  // the machine was too slow to see it early: it woke it once due
    EXPECT_NE(early.out.find("worker: t: completed"), std::string::npos) << early.out;
    return;
  }
  std::this_thread::sleep_for(
      std::chrono::milliseconds(std::max<int64_t>(0, wakeAt - systemClock()->nowMillis()) + 100));
  Outcome due = runLoom({"--home", home, "worker", "--once"}, dir);
  EXPECT_NE(due.out.find("worker: t: completed"), std::string::npos) << due.out;
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

TEST(Timers, ATimerSurvivesARestartOfItsWorker) {
  TempDir dir;
  std::string home = dir / "home";
  Outcome run = runLoom({"--home", home, "run", "example.timer", "--id", "t", "--input",
                         "{\"sleepMs\":1500}", "--json"},
                        dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  int64_t wakeAt = parseTimestamp(std::string(run.json().at("wakeAt").as_string()));
  {
    Child first({"--home", home, "worker", "--poll-ms", "50"}, dir);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    first.kill(SIGKILL);  // dies before the timer is due
    ASSERT_EQ(first.wait().termSignal, SIGKILL);
  }
  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  EXPECT_EQ(listed.json().at(0).at("status"), "parked") << listed.out;
  Child second({"--home", home, "worker", "--poll-ms", "50"}, dir);
  ASSERT_TRUE(allEnded(home, dir));
  EXPECT_GE(systemClock()->nowMillis(), wakeAt);
  second.kill(SIGTERM);
  EXPECT_EQ(second.wait().exitCode, 0);
  Outcome log = runLoom({"--home", home, "log", "t", "--json"}, dir);
  json::value events = log.json();
  int parks = 0, completed = 0;
  for (const auto& e : events.as_array()) {
    parks += e.at("type") == "EXECUTION_PARKED";
    completed += e.at("type") == "EXECUTION_COMPLETED";
  }
  EXPECT_EQ(parks, 1) << "the timer was waited for again: " << log.out;
  EXPECT_EQ(completed, 1);
}

TEST(Leases, ASignalToAnOrphanedRunContinuesItInTheSignallingProcess) {
  TempDir dir;
  std::string home = dir / "home";
  std::string witness = dir / "w.txt";
  Child run(
      {"--home", home, "run", "example.steps", "--id", "o", "--input", stepsInput(3, 100, witness)},
      dir);
  waitForLines(witness, 1, run);
  run.kill(SIGKILL);
  ASSERT_EQ(run.wait().termSignal, SIGKILL);
  Outcome signalled =
      runLoom({"--home", home, "signal", "o", "note", "1", "--force", "--json"}, dir);
  ASSERT_EQ(signalled.exitCode, 0) << signalled.err;
  EXPECT_EQ(signalled.json().at("status"), "completed") << "nobody else would have run it";
  EXPECT_EQ(countLines(witness).size(), 3u);
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

TEST(Workers, SigkilledWorkersRunsAreTakenOverAndEveryRunCompletes) {
  constexpr int kRuns = 4, kSteps = 4;
  TempDir dir;
  std::string home = dir / "home";
  for (int i = 0; i < kRuns; ++i) {
    std::string id = "k" + std::to_string(i);
    ASSERT_EQ(submitSteps(home, id, stepsInput(kSteps, 120, dir / (id + ".txt")), dir),
              "submitted");
  }
  Child survivor({"--home", home, "worker", "--concurrency", "4", "--poll-ms", "50"}, dir);
  int kills = 0;
  for (int round = 0; round < 3; ++round) {  // a worker killed mid-run, again and again
    Child victim({"--home", home, "worker", "--concurrency", "4", "--poll-ms", "20"}, dir);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    victim.kill(SIGKILL);
    victim.wait();
    ++kills;
  }
  EXPECT_TRUE(allEnded(home, dir)) << "runs of the killed workers were left unfinished";
  survivor.kill(SIGTERM);
  EXPECT_EQ(survivor.wait().exitCode, 0);
  for (int i = 0; i < kRuns; ++i) {
    std::string id = "k" + std::to_string(i);
    std::map<std::string, int> seen = countLines(dir / (id + ".txt"));
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kSteps)) << id;
    int repeated = 0;
    for (const auto& [step, times] : seen) repeated += times - 1;
    EXPECT_LE(repeated, kills) << id << ": more than one in-flight step per kill ran again";
  }
  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  json::value rows = listed.json();
  for (const auto& row : rows.as_array()) EXPECT_EQ(row.at("status"), "completed") << row;
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

// A sealed agent run (compliance.erase, subject bob) parked for an approval, resumed by
// `loom resume` and `loom signal` with the key: both go on from the checkpoint kept in the
// sealed park snapshot (one replayed step), and the signal's run rebuilds the transcript from
// the sealed log for the next model turn, with no fallback to the whole log.
TEST(Snapshots, ASealedAgentResumesFromItsCheckpointAndRebuildsItsTranscript) {
  TempDir dir;
  std::string home = dir / "home";
  Outcome key = runLoom({"keys", "new-master"}, dir);
  ASSERT_EQ(key.exitCode, 0) << key.err;
  std::vector<std::string> withKey{"LOOM_MASTER_KEY=" + key.out.substr(0, 64)};
  dir.write("s.json", R"({"turns":[{"toolCalls":[{"name":"send","arguments":{"n":1}}]},
                                    {"toolCalls":[{"name":"send","arguments":{"n":2}}]},
                                    {"toolCalls":[{"name":"gated","arguments":{}}]},
                                    {"answer":"ok"}]})");
  std::string app = dir.write("app.toml", R"([agent]
name = "sealed"
prompt = "go"
[model]
kind = "scripted"
script = "s.json"
[compliance.erase]
[security.keys]
env = "LOOM_MASTER_KEY"
[[tools]]
name = "send"
command = ["/bin/cat"]
[[tools]]
name = "gated"
command = ["/bin/cat"]
requiresApproval = true
)")
                        .string();
  Outcome parked = runLoom({"--home", home, "run", app, "--subject", "bob", "--id", "s", "--json"},
                           dir, withKey);
  ASSERT_EQ(parked.exitCode, 0) << parked.err;
  ASSERT_EQ(parked.json().at("parkReason"), "approval");
  Outcome resumed = runLoom({"--home", home, "resume", "s", "--json"}, dir, withKey);
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "parked");
  EXPECT_EQ(resumed.json().at("replayedSteps"), 1) << "turn 3's model step, from the checkpoint";
  EXPECT_EQ(resumed.err.find("warning"), std::string::npos) << resumed.err;
  Outcome approved = runLoom({"--home", home, "signal", "s", "approve:sealed#turn:3:tool:0",
                              R"({"approved": true})", "--json"},
                             dir, withKey);
  ASSERT_EQ(approved.exitCode, 0) << approved.err;
  EXPECT_EQ(approved.json().at("status"), "completed");
  EXPECT_EQ(approved.err.find("warning"), std::string::npos) << approved.err;
}

// A sealed agent run parked for an approval with a 1 s deadline: a worker without the key
// leaves it parked (it cannot read it) and goes on with the rest; with the key, once the
// deadline has passed, the call is denied as onApprovalTimeout says and the run completes.
TEST(Timers, AnApprovalDeadlineFiresInAWorkerThatHoldsTheKeyOnly) {
  TempDir dir;
  std::string home = dir / "home";
  Outcome key = runLoom({"keys", "new-master"}, dir);
  ASSERT_EQ(key.exitCode, 0) << key.err;
  std::vector<std::string> withKey{"LOOM_MASTER_KEY=" + key.out.substr(0, 64)};
  dir.write("s.json",
            R"({"turns":[{"toolCalls":[{"name":"send","arguments":{}}]},{"answer":"ok"}]})");
  std::string app = dir.write("app.toml", R"([agent]
name = "gate"
prompt = "go"
[model]
kind = "scripted"
script = "s.json"
[compliance.erase]
[security.keys]
env = "LOOM_MASTER_KEY"
[[tools]]
name = "send"
command = ["/bin/cat"]
requiresApproval = true
approvalTimeout = "1s"
)")
                        .string();
  Outcome parked = runLoom({"--home", home, "run", app, "--subject", "bob", "--id", "g", "--json"},
                           dir, withKey);
  ASSERT_EQ(parked.exitCode, 0) << parked.err;
  EXPECT_EQ(parked.json().at("parkReason"), "approval");
  EXPECT_TRUE(parked.json().as_object().contains("wakeAt"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1'100));

  Outcome keyless = runLoom({"--home", home, "worker", "--once"}, dir, {"LOOM_MASTER_KEY="});
  EXPECT_EQ(keyless.exitCode, 0) << keyless.err;
  EXPECT_EQ(keyless.out.find("worker: g:"), std::string::npos) << keyless.out;
  Outcome keyed = runLoom({"--home", home, "worker", "--once"}, dir, withKey);
  EXPECT_NE(keyed.out.find("worker: g: completed"), std::string::npos) << keyed.out << keyed.err;
  Outcome state = runLoom({"--home", home, "log", "g", "--json"}, dir, withKey);
  EXPECT_NE(state.out.find("nobody approved this tool call within 1 s"), std::string::npos)
      << state.out;
}

}  // namespace
}  // namespace loom::testing
