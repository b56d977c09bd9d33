// `loom worker` runs its runs in its own process (worker::Executor, docs/operations.md
// "Workers"), tried on the real binary and home: a worker SIGKILLed with 200 agent runs in
// flight loses none of them to the next worker, and no recorded tool call runs again (the
// tool appends its run and step, LOOM_EXECUTION_ID and LOOM_STEP_ID, to a witness file); two workers racing on one home run every run
// exactly once; a run whose app needs an environment variable that is not set stays
// submitted, and `--once` says which variable and exits 1.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <thread>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

std::string stepsInput(int steps, int sleepMs, const std::string& witness) {
  return "{\"steps\":" + std::to_string(steps) + ",\"sleepMs\":" + std::to_string(sleepMs) +
         ",\"witness\":\"" + witness + "\"}";
}

void submitAll(const std::string& home, int runs, int steps, int sleepMs, const TempDir& dir) {
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < runs; ++i) {
    std::string id = "r" + std::to_string(i);
    commands.push_back({"--home", home, "run", "example.steps", "--id", id, "--submit", "--input",
                        stepsInput(steps, sleepMs, dir / (id + ".txt"))});
  }
  for (const Outcome& o : runLoomAll(commands, dir)) ASSERT_EQ(o.exitCode, 0) << o.err;
}

// The status of every run of `home`, by id.
std::map<std::string, std::string> statuses(const std::string& home, const TempDir& dir) {
  std::map<std::string, std::string> out;
  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  if (listed.exitCode != 0) return out;
  json::value rows = listed.json();  // a copy: json() returns a temporary
  for (const auto& row : rows.as_array()) {
    out[std::string(row.at("id").as_string())] = std::string(row.at("status").as_string());
  }
  return out;
}

bool allCompleted(const std::string& home, int runs, const TempDir& dir) {
  auto seen = statuses(home, dir);
  if (seen.size() != static_cast<std::size_t>(runs)) return false;
  for (const auto& [id, status] : seen) {
    if (status != "completed") return false;
  }
  return true;
}

// How many times each step of run `id` ran, by step id.
std::map<std::string, int> stepsRun(const TempDir& dir, const std::string& id) {
  std::map<std::string, int> seen;
  for (const auto& line : readLines(dir / (id + ".txt"))) ++seen[line];
  return seen;
}

// An agent app whose model takes 100 ms a turn and whose tool appends "<run> <step>" to
// `witness` on each call: 3 turns, the first two call the tool.
std::string witnessApp(const TempDir& dir, const std::string& witness,
                       const std::string& folder = ".", const std::string& name = "witnessed") {
  dir.write(folder + "/tool.sh",
            "#!/bin/sh\ncat >/dev/null\necho \"$LOOM_EXECUTION_ID $LOOM_STEP_ID\" >> " + witness +
                "\necho '{\"ok\": true}'\n",
            true);
  dir.write(folder + "/script.json", R"({"latencyMs": 100, "turns": [
      {"toolCalls": [{"name": "note", "arguments": {}}]},
      {"toolCalls": [{"name": "note", "arguments": {}}]},
      {"answer": "done"}]})");
  return dir.write(folder + "/app.toml", "[agent]\nname = \"" + name + "\"\n" + R"(prompt = "go"
[model]
kind = "scripted"
script = "script.json"
[[tools]]
name = "note"
description = "notes the call"
command = ["./tool.sh"]
)").string();
}

TEST(InProcessWorkers, ASigkilledWorkerWithTwoHundredAgentRunsLosesNoneAndRunsNoRecordedStepAgain) {
  constexpr int kRuns = 200;
  TempDir dir;
  std::string home = dir / "home";
  std::string witness = dir / "witness.txt";
  std::string app = witnessApp(dir, witness);
  std::vector<std::vector<std::string>> submissions;
  for (int i = 0; i < kRuns; ++i) {
    submissions.push_back({"--home", home, "run", app, "--id", "a" + std::to_string(i), "--submit"});
  }
  for (const Outcome& o : runLoomAll(submissions, dir)) ASSERT_EQ(o.exitCode, 0) << o.err;
  {
    Child victim({"--home", home, "worker", "--concurrency", "1000"}, dir);
    ASSERT_TRUE(victim.waitForOutput("worker: pid "));
    // Killed while its runs are in flight: tool calls recorded, none of the runs ended.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (readLines(witness).size() < 60 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    victim.kill(SIGKILL);
    victim.wait();
  }
  EXPECT_FALSE(allCompleted(home, kRuns, dir)) << "the worker finished before it was killed";
  Outcome next = runLoom({"--home", home, "worker", "--once", "--concurrency", "1000"}, dir);
  ASSERT_EQ(next.exitCode, 0) << next.out << next.err;
  EXPECT_TRUE(allCompleted(home, kRuns, dir)) << next.out;
  std::map<std::string, std::map<std::string, int>> calls;  // run -> step -> times
  for (const auto& line : readLines(witness)) {
    auto space = line.find(' ');
    ++calls[line.substr(0, space)][line.substr(space + 1)];
  }
  for (int i = 0; i < kRuns; ++i) {
    std::string id = "a" + std::to_string(i);
    EXPECT_EQ(calls[id].size(), 2u) << id << ": its two tool calls";
    int repeated = 0;
    for (const auto& [step, times] : calls[id]) repeated += times - 1;
    EXPECT_LE(repeated, 1) << id << ": a call that was not in flight at the kill ran again";
  }
}

TEST(InProcessWorkers, TwoWorkersOnOneHomeRunEveryRunExactlyOnce) {
  constexpr int kRuns = 100, kSteps = 2;
  TempDir dir;
  std::string home = dir / "home";
  submitAll(home, kRuns, kSteps, 10, dir);
  Child first({"--home", home, "worker", "--once", "--concurrency", "8"}, dir);
  Child second({"--home", home, "worker", "--once", "--concurrency", "8"}, dir);
  Outcome a = first.wait();
  Outcome b = second.wait();
  EXPECT_EQ(a.exitCode, 0) << a.out << a.err;
  EXPECT_EQ(b.exitCode, 0) << b.out << b.err;
  EXPECT_TRUE(allCompleted(home, kRuns, dir));
  for (int i = 0; i < kRuns; ++i) {
    std::string id = "r" + std::to_string(i);
    for (const auto& [step, times] : stepsRun(dir, id)) {
      EXPECT_EQ(times, 1) << id << " " << step;
    }
    std::string line = "worker: " + id + ": completed";
    bool inA = a.out.find(line + "\n") != std::string::npos;
    bool inB = b.out.find(line + "\n") != std::string::npos;
    EXPECT_NE(inA, inB) << id << " was reported by " << (inA ? "both workers" : "neither worker");
  }
}

// --isolation process: each run in a `loom resume` child of its own, as before the executor.
TEST(InProcessWorkers, IsolationProcessRunsEachRunInAChildOfItsOwn) {
  constexpr int kRuns = 4, kSteps = 2;
  TempDir dir;
  std::string home = dir / "home";
  submitAll(home, kRuns, kSteps, 10, dir);
  Outcome worker = runLoom({"--home", home, "worker", "--once", "--isolation", "process"}, dir);
  ASSERT_EQ(worker.exitCode, 0) << worker.out << worker.err;
  EXPECT_NE(worker.out.find("(a child process each)"), std::string::npos) << worker.out;
  EXPECT_TRUE(allCompleted(home, kRuns, dir)) << worker.out;
  for (int i = 0; i < kRuns; ++i) {
    std::string id = "r" + std::to_string(i);
    auto ran = stepsRun(dir, id);
    EXPECT_EQ(ran.size(), static_cast<std::size_t>(kSteps)) << id;
    for (const auto& [step, times] : ran) EXPECT_EQ(times, 1) << id << " " << step;
  }
}

// One worker serves the runs of two agent app files, each on its own app (its own tools).
TEST(InProcessWorkers, OneWorkerRunsTheRunsOfTwoAppFiles) {
  TempDir dir;
  std::string home = dir / "home";
  std::string witness = dir / "witness.txt";
  std::string first = witnessApp(dir, witness, "one", "first");
  std::string second = witnessApp(dir, witness, "two", "second");
  for (const auto& [app, id] : {std::pair{first, "f1"}, {second, "s1"}, {first, "f2"}}) {
    Outcome o = runLoom({"--home", home, "run", app, "--id", id, "--submit"}, dir);
    ASSERT_EQ(o.exitCode, 0) << o.err;
  }
  Outcome worker = runLoom({"--home", home, "worker", "--once"}, dir);
  ASSERT_EQ(worker.exitCode, 0) << worker.out << worker.err;
  auto seen = statuses(home, dir);
  for (const char* id : {"f1", "s1", "f2"}) EXPECT_EQ(seen[id], "completed") << id << worker.out;
  EXPECT_EQ(readLines(witness).size(), 6u) << "two tool calls per run, each once";
}

TEST(InProcessWorkers, ARunWhoseAppNeedsAMissingVariableStaysSubmittedAndOnceFails) {
  TempDir dir;
  std::string home = dir / "home";
  dir.write("s.json", R"({"turns":[{"answer":"ok"}]})");
  std::string app = dir.write("app.toml", R"([agent]
name = "needs-env"
prompt = "go"
[model]
kind = "openai"
baseUrl = "${LOOM_TEST_MODEL_URL}"
model = "m"
apiKeyEnv = ""
)").string();
  Outcome submitted = runLoom({"--home", home, "run", app, "--id", "e", "--submit"}, dir,
                              {"LOOM_TEST_MODEL_URL=http://127.0.0.1:9/v1"});
  ASSERT_EQ(submitted.exitCode, 0) << submitted.err;
  Outcome worker = runLoom({"--home", home, "worker", "--once"}, dir);
  EXPECT_EQ(worker.exitCode, 1) << worker.out;
  EXPECT_NE(worker.out.find("worker: e: could not start: "), std::string::npos) << worker.out;
  EXPECT_NE(worker.out.find("LOOM_TEST_MODEL_URL is not set"), std::string::npos) << worker.out;
  EXPECT_EQ(worker.out.find("restore the file"), std::string::npos) << worker.out;
  EXPECT_EQ(statuses(home, dir)["e"], "submitted");
}

}  // namespace
}  // namespace loom::testing
