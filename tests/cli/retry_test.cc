// Durable retries on the real binary and home (docs/operations.md, "Retries"): an agent whose
// model server answers 503 for a while, then 200. `loom run` waits a short outage out by itself;
// a longer wait parks the run `retrying` (shown by `loom ls`), which a worker runs when due,
// `loom retry` at once and `loom cancel` ends; a run SIGKILLed while it waits to retry is
// finished by a worker. The model's own in-process retries are off (maxRetries = 0), so every
// 503 is one durable attempt. Each test serves its own chat-completions server on 127.0.0.1.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "loom/util/clock.h"
#include "support/chat_server.h"
#include "support/loom_process.h"

namespace loom::testing {
namespace {

class RetryCli : public ::testing::Test {
 protected:
  // The agent app, with `retry` as the body of its [execution.retry] table.
  std::string app(const std::string& retry) {
    std::string path = dir_ / "app.toml";
    std::ofstream(path) << "[agent]\nname = \"research\"\nprompt = \"Say hi.\"\n\n[model]\n"
                        << "kind = \"openai\"\nbaseUrl = \"" << server_.baseUrl()
                        << "\"\nmodel = \"test-model\"\napiKeyEnv = \"\"\nmaxRetries = 0\n\n"
                        << "[execution.retry]\njitter = 0.0\n"
                        << retry;
    return path;
  }
  Outcome loom(std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home_});
    return runLoom(args, dir_);
  }
  // Execution `id`'s row of `loom ls --json`; null (a test failure unless `quiet`) when there
  // is none (yet).
  json::value row(const std::string& id, bool quiet = false) {
    Outcome listed = loom({"ls", "--json"});
    if (quiet && listed.exitCode != 0) return nullptr;  // no home yet
    EXPECT_EQ(listed.exitCode, 0) << listed.err;
    json::value rows = listed.json();
    for (const auto& r : rows.as_array()) {
      if (r.at("id") == id.c_str()) return r;
    }
    if (!quiet) ADD_FAILURE() << "no execution " << id << " in " << listed.out;
    return nullptr;
  }
  // Waits up to `seconds` for execution `id` to show `status` in `loom ls`.
  bool waitForStatus(const std::string& id, const std::string& status, int seconds = 30) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      json::value r = row(id, true);
      if (r.is_object() && r.at("status") == status.c_str()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  int stepFailures(const std::string& id) {
    Outcome log = loom({"log", id, "--json"});
    int n = 0;
    json::value events = log.json();
    for (const auto& e : events.as_array()) n += e.at("type") == "STEP_FAILED";
    return n;
  }
  void serveBusy(int times) {
    for (int i = 0; i < times; ++i) server_.push({503, R"({"error":{"message":"overloaded"}})"});
  }

  ChatServer server_;
  TempDir dir_;
  std::string home_ = dir_ / "home";
};

TEST_F(RetryCli, LoomRunWaitsOutAShortModelOutageAndCompletes) {
  std::string file = app("initialIntervalMs = 200\nmaxIntervalMs = 400\n");
  serveBusy(3);
  server_.push(answer("hi after the outage"));
  Outcome run = loom({"run", file, "--id", "short", "--json"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  json::value result = run.json();
  EXPECT_EQ(result.at("status"), "completed") << run.out;
  EXPECT_EQ(result.at("output").at("answer"), "hi after the outage");
  EXPECT_EQ(server_.requests().size(), 4u) << "three 503s, then the answer";
  EXPECT_EQ(result.at("modelCalls"), 1) << "the answered call, not the failed attempts";
  EXPECT_EQ(stepFailures("short"), 3) << "each failed attempt is recorded";
  EXPECT_NE(run.err.find("attempt 3 of 'openai:test-model' failed (unavailable)"),
            std::string::npos)
      << run.err;
}

TEST_F(RetryCli, ALongerWaitParksTheRunRetryingAndAWorkerRunsItWhenDue) {
  // 3 s: `ls` and the early worker start well before it is due, even on a loaded machine.
  std::string file = app("initialIntervalMs = 3000\nwaitInlineUpToMs = 0\n");
  serveBusy(1);
  server_.push(answer("hi"));
  Outcome run = loom({"run", file, "--id", "later", "--json"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  json::value parked = run.json();
  ASSERT_EQ(parked.at("status"), "parked") << run.out;
  EXPECT_EQ(parked.at("parkReason"), "retrying");
  int64_t wakeAt = parseTimestamp(std::string(parked.at("wakeAt").as_string()));
  json::value listed = row("later");
  EXPECT_EQ(listed.at("status"), "retrying");
  EXPECT_EQ(listed.at("nextAttemptAt"), parked.at("wakeAt"));
  EXPECT_NE(std::string(listed.at("lastError").as_string()).find("overloaded"), std::string::npos)
      << listed;
  Outcome human = loom({"ls"});
  EXPECT_NE(human.out.find("retrying"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("retrying: next "), std::string::npos) << human.out;

  Outcome early = loom({"worker", "--once"});
  ASSERT_EQ(early.exitCode, 0) << early.err;
  if (systemClock()->nowMillis() < wakeAt) {  // it ran wholly before the attempt was due
    EXPECT_EQ(server_.requests().size(), 1u) << "a worker retried before the attempt was due";
  }

  Child worker({"--home", home_, "worker", "--poll-ms", "100"}, dir_);
  EXPECT_TRUE(waitForStatus("later", "completed")) << row("later");
  worker.kill(SIGTERM);
  EXPECT_EQ(worker.wait().exitCode, 0);
  EXPECT_EQ(server_.requests().size(), 2u);
}

TEST_F(RetryCli, AWorkerRidesOutATenSecondOutageAndTheLogShowsEveryAttempt) {
  std::string file = app("initialIntervalMs = 1000\nmaxIntervalMs = 2000\nwaitInlineUpToMs = 0\n");
  Outcome submitted = loom({"run", file, "--id", "outage", "--submit"});
  ASSERT_EQ(submitted.exitCode, 0) << submitted.err;
  server_.outageUntil(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  server_.push(answer("hi after ten seconds"));
  Child worker({"--home", home_, "worker", "--poll-ms", "100"}, dir_);
  ASSERT_TRUE(waitForStatus("outage", "completed", 60)) << row("outage");
  worker.kill(SIGTERM);
  EXPECT_EQ(worker.wait().exitCode, 0);
  Outcome log = loom({"log", "outage", "--json"});
  json::value events = log.json();
  int attempts = 0;
  for (const auto& e : events.as_array()) {
    if (e.at("type") != "STEP_FAILED") continue;
    ++attempts;
    EXPECT_TRUE(e.at("retryable").as_bool());
    EXPECT_EQ(e.at("attempt"), attempts);
    EXPECT_TRUE(e.as_object().contains("nextAttemptAt"));
  }
  // 1 s, then 2 s between attempts (less jitter) over 10 s: about six when every attempt is
  // quick; a loaded machine or a sanitizer build spends seconds starting each `loom resume`.
  EXPECT_GE(attempts, 3) << "1 s, then 2 s between attempts over 10 s";
  EXPECT_EQ(server_.requests().size(), static_cast<std::size_t>(attempts) + 1);
  EXPECT_EQ(events.as_array().back().at("type"), "EXECUTION_COMPLETED");
}

TEST_F(RetryCli, LoomRetryRunsItNowAResumeBeforeTheTimeDoesNotAndCancelEndsIt) {
  std::string file = app("initialIntervalMs = 3600000\nmaxIntervalMs = 3600000\n");
  serveBusy(1);
  Outcome run = loom({"run", file, "--id", "r"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("retrying at"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("loom retry r"), std::string::npos) << run.out;

  Outcome resumed = loom({"resume", "r", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("parkReason"), "retrying");
  EXPECT_EQ(server_.requests().size(), 1u) << "resume ran the attempt before it was due";

  server_.push(answer("hi"));
  Outcome retried = loom({"retry", "r", "--json"});
  ASSERT_EQ(retried.exitCode, 0) << retried.err;
  EXPECT_EQ(retried.json().at("status"), "completed") << retried.out;
  EXPECT_EQ(server_.requests().size(), 2u);
  Outcome again = loom({"retry", "r"});
  EXPECT_NE(again.exitCode, 0);
  EXPECT_NE(again.err.find("is completed, not retrying"), std::string::npos) << again.err;

  serveBusy(1);
  ASSERT_EQ(loom({"run", file, "--id", "c"}).exitCode, 0);
  ASSERT_EQ(row("c").at("status"), "retrying");
  Outcome cancelled = loom({"cancel", "c", "--reason", "the provider is gone"});
  ASSERT_EQ(cancelled.exitCode, 0) << cancelled.err;
  EXPECT_EQ(row("c").at("status"), "cancelled");
  Outcome late = loom({"retry", "c"});
  EXPECT_NE(late.exitCode, 0) << "a cancelled run was retried";
  EXPECT_EQ(server_.requests().size(), 3u);
}

TEST_F(RetryCli, ARunSigkilledWhileWaitingToRetryIsFinishedByAWorker) {
  std::string file = app("initialIntervalMs = 2000\n");  // waited out inline (30 s allowed)
  serveBusy(1);
  server_.push(answer("hi"));
  Child run({"--home", home_, "run", file, "--id", "k"}, dir_);
  ASSERT_TRUE(waitForStatus("k", "retrying")) << row("k");
  run.kill(SIGKILL);
  ASSERT_EQ(run.wait().termSignal, SIGKILL);
  EXPECT_EQ(server_.requests().size(), 1u);

  Child worker({"--home", home_, "worker", "--poll-ms", "100"}, dir_);
  EXPECT_TRUE(waitForStatus("k", "completed")) << row("k");
  worker.kill(SIGTERM);
  EXPECT_EQ(worker.wait().exitCode, 0);
  EXPECT_EQ(server_.requests().size(), 2u) << "the attempt ran once more, and only once";
}

// A `loom run` waiting out a retry inline holds the run: `loom ls` shows it as that process's
// (before, as an unowned retrying run), and `loom retry` runs exactly one attempt and returns.
TEST_F(RetryCli, ARunWaitingInlineIsOwnedByItsProcessAndLoomRetryRunsOneAttempt) {
  std::string file = app("initialIntervalMs = 6000\nmaxIntervalMs = 6000\n");  // waited inline
  serveBusy(10);
  Child run({"--home", home_, "run", file, "--id", "w"}, dir_);
  ASSERT_TRUE(waitForStatus("w", "retrying")) << row("w");
  json::value listed = row("w");
  ASSERT_TRUE(listed.as_object().contains("owner")) << listed;
  EXPECT_EQ(listed.at("owner").at("pid").as_int64(), static_cast<int64_t>(run.pid())) << listed;
  Outcome human = loom({"ls"});
  EXPECT_NE(human.out.find("retrying, inline: pid " + std::to_string(run.pid())),
            std::string::npos)
      << human.out;
  Outcome taken = loom({"retry", "w"});
  EXPECT_EQ(taken.exitCode, 1) << "the waiting process runs it: " << taken.out;
  EXPECT_NE(taken.err.find("is being run by process"), std::string::npos) << taken.err;
  run.kill(SIGKILL);
  ASSERT_EQ(run.wait().termSignal, SIGKILL);
  std::size_t before = server_.requests().size();

  Outcome once = loom({"retry", "w", "--json"});
  ASSERT_EQ(once.exitCode, 0) << once.err;
  EXPECT_EQ(once.json().at("status"), "parked") << once.out;
  EXPECT_EQ(once.json().at("parkReason"), "retrying") << once.out;
  EXPECT_EQ(server_.requests().size(), before + 1)
      << "one attempt, not a wait and another (the server answers 503 to every one)";
}

TEST_F(RetryCli, ABadRequestIsNotRetried) {
  std::string file = app("initialIntervalMs = 100\n");
  server_.push({400, R"({"error":{"message":"unknown parameter"}})"});
  Outcome run = loom({"run", file, "--id", "bad", "--json"});
  EXPECT_EQ(run.json().at("status"), "failed") << run.out;
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(stepFailures("bad"), 1);
}

TEST_F(RetryCli, ARetryPolicyOutOfRangeIsAConfigErrorNamingTheOption) {
  std::string file =
      app("initialIntervalMs = 5000\nmaxIntervalMs = 10\n"
          "effects.nope = { maxAttempts = 0 }\n");
  Outcome check = loom({"config", "check", file});
  EXPECT_NE(check.exitCode, 0);
  std::string said = check.out + check.err;
  EXPECT_NE(said.find("execution.retry.maxIntervalMs"), std::string::npos) << said;
  EXPECT_NE(said.find("execution.retry.effects.nope.maxAttempts"), std::string::npos) << said;
}

}  // namespace
}  // namespace loom::testing
