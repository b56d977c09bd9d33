// Workers on many "machines" (separate processes with separate home folders) over one
// PostgreSQL schema, crashed for real: three workers, one SIGKILLed again and again, and a
// server restarted as a crash would (`pg_ctl restart -m immediate`) in the middle of twenty
// running agents. Every run completes; no recorded step runs again; every log's seqs are
// 1..n without a gap or a duplicate.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "support/loom_process.h"
#include "support/postgres_server.h"
#include "support/sanitizer.h"

namespace loom::testing {
namespace {

const std::string kExamples = std::string(LOOM_SOURCE_DIR) + "/examples/agents/";

class PostgresWorkers : public ::testing::Test {
 protected:
  void useServer(const std::string& url) {
    env_ = {"LOOM_DATABASE_URL=" + url, "LOOM_DATABASE_SCHEMA=" + testSchemaFor(dir_.path()),
            "LOOM_TOOL_WITNESS=" + (dir_ / "tools.txt")};
    Outcome migrated = cli({"db", "migrate"});
    ASSERT_EQ(0, migrated.exitCode) << migrated.err;
  }
  std::string home(const std::string& machine) const { return dir_ / ("machine-" + machine); }
  Outcome cli(std::vector<std::string> args, const std::string& machine = "a") {
    args.insert(args.begin(), {"--home", home(machine)});
    return runLoom(args, dir_, env_);
  }
  std::unique_ptr<Child> worker(const std::string& machine, int concurrency) {
    return std::make_unique<Child>(
        std::vector<std::string>{"--home", home(machine), "worker", "--concurrency",
                                 std::to_string(concurrency), "--poll-ms", "100"},
        dir_, env_);
  }

  // Polls `loom ls` until every execution has ended; returns the last listing.
  json::array waitUntilAllEnded(std::size_t runs, std::chrono::seconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    json::array listed;
    while (std::chrono::steady_clock::now() < deadline) {
      Outcome ls = cli({"ls", "--json"}, "observer");
      if (ls.exitCode == 0) {
        listed = ls.json().as_array();
        std::size_t ended = 0;
        for (const auto& e : listed) {
          const auto& status = e.at("status");
          ended += status == "completed" || status == "failed" || status == "cancelled";
        }
        if (listed.size() == runs && ended == runs) return listed;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    ADD_FAILURE() << "not every run ended in " << limit.count() << " s: " << json::toText(listed);
    return listed;
  }

  // The log of `id`: its seqs are 1..n and each step id is recorded once; returns the step ids.
  std::vector<std::string> checkedSteps(const std::string& id) {
    Outcome log = cli({"log", id, "--json"}, "observer");
    EXPECT_EQ(0, log.exitCode) << log.err;
    std::vector<std::string> steps;
    std::set<std::string> unique;
    int64_t expected = 1;
    json::value events = log.json();
    for (const auto& e : events.as_array()) {
      EXPECT_EQ(e.at("seq").to_number<int64_t>(), expected++) << id << ": a gap or a duplicate";
      if (e.at("type") != "STEP_COMPLETED") continue;
      std::string step(e.at("stepId").as_string());
      EXPECT_TRUE(unique.insert(step).second) << id << ": " << step << " recorded twice";
      steps.push_back(step);
    }
    return steps;
  }

  TempDir dir_;
  std::vector<std::string> env_;
};

TEST_F(PostgresWorkers, ThreeWorkersOneSigkilledAgainAndAgainFinishEveryRunRunningEachStepOnce) {
  LOOM_SKIP_WITHOUT_POSTGRES();
  useServer(testPostgresUrl());
  constexpr int kRuns = 9;
  constexpr int kSteps = 15;
  for (int i = 0; i < kRuns; ++i) {
    std::string id = "w" + std::to_string(i);
    std::string input = "{\"steps\":" + std::to_string(kSteps) + ",\"sleepMs\":30,\"witness\":\"" +
                        (dir_ / (id + ".txt")) + "\"}";
    Outcome submitted = cli({"run", "example.steps", "--id", id, "--input", input, "--submit"});
    ASSERT_EQ(0, submitted.exitCode) << submitted.err;
  }
  std::vector<std::unique_ptr<Child>> workers;
  for (const char* machine : {"a", "b", "c"}) workers.push_back(worker(machine, 3));
  constexpr int kKills = 6;
  for (int k = 0; k < kKills; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    auto& victim = workers[k % workers.size()];
    victim->kill(SIGKILL);
    EXPECT_EQ(victim->wait().termSignal, SIGKILL);
    victim = worker(std::string(1, static_cast<char>('a' + k % 3)), 3);
  }
  json::array listed = waitUntilAllEnded(kRuns, std::chrono::seconds(120));
  for (auto& w : workers) w->kill(SIGTERM);
  std::string said;
  for (auto& w : workers) said += w->wait().out;
  // Claims split the work: no worker starts a child for a run another one claimed.
  EXPECT_EQ(said.find("taken by another runner"), std::string::npos) << said;

  for (const auto& e : listed) {
    std::string id(e.at("id").as_string());
    EXPECT_EQ(e.at("status"), "completed") << id;
    EXPECT_EQ(checkedSteps(id).size(), static_cast<std::size_t>(kSteps)) << id;
    std::map<std::string, int> ran;
    for (const auto& line : readLines(dir_ / (id + ".txt"))) ++ran[line];
    int again = 0;
    for (int s = 1; s <= kSteps; ++s) {
      int n = ran["step-" + std::to_string(s)];
      EXPECT_GE(n, 1) << id << " step-" << s << " never ran";
      again += n - 1;
    }
    // Only a step in flight when its worker died may run again: at most one per kill.
    EXPECT_LE(again, kKills) << id;
  }
}

TEST_F(PostgresWorkers, AServerCrashAmidTwentyRunningAgentsLosesNothingAndEveryRunCompletes) {
  LOOM_SKIP_WITHOUT_POSTGRES();
  PrivatePostgres server;  // restarted below: not the cluster the other tests share
  useServer(server.url());
  constexpr int kRuns = 20;
  std::string app = kExamples + "research.toml";
  for (int i = 0; i < kRuns; ++i) {
    Outcome submitted = cli({"run", app, "--id", "g" + std::to_string(i), "--submit"});
    ASSERT_EQ(0, submitted.exitCode) << submitted.err;
  }
  auto a = worker("a", 10);
  auto b = worker("b", 10);
  // Some tool calls have run (the agents are mid-run): crash the server under them.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (readLines(dir_ / "tools.txt").size() < 15) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the agents made no progress";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  server.restartImmediately();
  json::array listed = waitUntilAllEnded(kRuns, std::chrono::seconds(180));
  a->kill(SIGTERM);
  b->kill(SIGTERM);
  // (Here a worker may report "taken by another runner": a child that lost its connection
  // dies holding the run's lease, and the other worker takes the run over at once.)
  Outcome aOut = a->wait();
  Outcome bOut = b->wait();

  ASSERT_EQ(listed.size(), static_cast<std::size_t>(kRuns));
  for (const auto& e : listed) {
    std::string id(e.at("id").as_string());
    EXPECT_EQ(e.at("status"), "completed") << id;
    EXPECT_EQ(checkedSteps(id).size(), 24u) << id << ": 12 model turns and 12 tool calls";
    if (e.at("status") != "completed") {
      Outcome log = cli({"log", id});  // why it ended so: its last events
      std::cerr << id << ":\n" << log.out.substr(log.out.size() > 1500 ? log.out.size() - 1500 : 0);
    }
  }
  if (HasFailure()) {
    std::cerr << "worker a:\n" << aOut.out << aOut.err << "worker b:\n" << bOut.out << bOut.err;
  }
}

// Three in-process workers (the default, worker::Executor) on three "machines" share 500
// submitted runs (150 under the sanitizer, where each submission's process is slower): every run completes, each step runs once, and each run is reported by
// exactly one worker.
TEST_F(PostgresWorkers, ThreeInProcessWorkersRunFiveHundredSubmittedRunsExactlyOnce) {
  LOOM_SKIP_WITHOUT_POSTGRES();
  useServer(testPostgresUrl());
  constexpr int kRuns = kSanitized ? 150 : 500;
  std::vector<std::vector<std::string>> submissions;
  for (int i = 0; i < kRuns; ++i) {
    std::string id = "x" + std::to_string(i);
    std::string input = "{\"steps\":2,\"sleepMs\":5,\"witness\":\"" + (dir_ / (id + ".txt")) +
                        "\"}";
    submissions.push_back(
        {"--home", home("a"), "run", "example.steps", "--id", id, "--input", input, "--submit"});
  }
  for (const Outcome& o : runLoomAll(submissions, dir_, env_)) {
    ASSERT_EQ(0, o.exitCode) << o.err;
  }
  std::vector<std::unique_ptr<Child>> workers;
  for (const char* machine : {"a", "b", "c"}) {
    workers.push_back(std::make_unique<Child>(
        std::vector<std::string>{"--home", home(machine), "worker", "--once", "--concurrency",
                                 "50"},
        dir_, env_));
  }
  std::vector<std::string> said, warned;
  for (auto& w : workers) {
    Outcome o = w->wait();
    EXPECT_EQ(0, o.exitCode) << o.out << o.err;
    said.push_back(o.out);
    warned.push_back(o.err);
  }
  json::array listed = waitUntilAllEnded(kRuns, std::chrono::seconds(60));
  int notCompleted = 0;
  for (const auto& e : listed) {
    if (e.at("status") != "completed" && ++notCompleted <= 5) ADD_FAILURE() << e;
  }
  EXPECT_EQ(notCompleted, 0) << "of " << listed.size() << " listed";
  if (HasFailure()) {  // what the workers said, to tell a lost run from a slow one
    for (std::size_t i = 0; i < said.size(); ++i) {
      std::cerr << "worker " << i << " said (last 2000 bytes):\n"
                << said[i].substr(said[i].size() > 2000 ? said[i].size() - 2000 : 0)
                << warned[i].substr(warned[i].size() > 2000 ? warned[i].size() - 2000 : 0);
    }
    return;
  }
  for (int i = 0; i < kRuns; ++i) {
    std::string id = "x" + std::to_string(i);
    std::map<std::string, int> ran;
    for (const auto& line : readLines(dir_ / (id + ".txt"))) ++ran[line];
    EXPECT_EQ(ran.size(), 2u) << id;
    for (const auto& [step, n] : ran) EXPECT_EQ(n, 1) << id << " " << step;
    int reporters = 0;
    for (const auto& out : said) reporters += out.find("worker: " + id + ": completed\n") != std::string::npos;
    EXPECT_EQ(reporters, 1) << id;
  }
}

// Sealed runs on the shared schema, erased and exported while two workers run others: the
// erased subject's runs read as erased, every other run completes and stays readable, and the
// sweep afterwards deletes nothing they cite.
TEST_F(PostgresWorkers, ErasureAndExportWhileWorkersRunSealedRuns) {
  LOOM_SKIP_WITHOUT_POSTGRES();
  useServer(testPostgresUrl());
  env_.push_back("LOOM_MASTER_KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  std::string app = kExamples + "compliance.toml";
  auto submit = [&](const std::string& id, const std::string& subject) {
    Outcome o = cli({"run", app, "--id", id, "--subject", subject, "--submit"});
    ASSERT_EQ(0, o.exitCode) << o.err;
  };
  submit("alice-1", "alice");
  submit("alice-2", "alice");
  Outcome first = cli({"worker", "--once"}, "a");
  ASSERT_EQ(0, first.exitCode) << first.out << first.err;

  for (int i = 1; i <= 4; ++i) {
    submit("bob-" + std::to_string(i), "bob");
    submit("carol-" + std::to_string(i), "carol");
  }
  auto a = worker("a", 2);
  auto b = worker("b", 2);
  Outcome erased = cli({"erase", "alice"}, "c");  // while bob's and carol's runs run
  ASSERT_EQ(0, erased.exitCode) << erased.err;
  Outcome exported = cli({"export", "carol"}, "c");
  ASSERT_EQ(0, exported.exitCode) << exported.err;
  EXPECT_EQ(exported.out.find("alice"), std::string::npos) << "another subject's data exported";

  json::array listed = waitUntilAllEnded(10, std::chrono::seconds(120));
  a->kill(SIGTERM);
  b->kill(SIGTERM);
  a->wait();
  b->wait();
  for (const auto& e : listed) {
    std::string id(e.at("id").as_string());
    EXPECT_EQ(e.at("status"), "completed") << id;
    const auto* gone = e.as_object().if_contains("erased");
    bool isAlice = id.rfind("alice", 0) == 0;
    EXPECT_EQ(gone != nullptr && *gone == true, isAlice) << id;
    if (isAlice) continue;
    Outcome log = cli({"log", id}, "c");
    EXPECT_NE(log.out.find("Read the first pages"), std::string::npos) << id << log.err;
  }
  Outcome swept = cli({"sweep", "--json"}, "c");
  ASSERT_EQ(0, swept.exitCode) << swept.err;
  EXPECT_EQ(swept.json().at("deleted"), 0) << "a blob the others cite was deleted";
  Outcome bob = cli({"export", "bob"}, "c");
  EXPECT_EQ(0, bob.exitCode) << bob.err;
}

}  // namespace
}  // namespace loom::testing
