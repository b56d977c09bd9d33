// boot: nothing is composed from an invalid config; the chain's order; the kill switch and
// redaction through a booted app.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "effects/step_ids.h"
#include "loom/app/app.h"
#include "loom/app/config_file.h"
#include "loom/content/memory_content_store.h"
#include "loom/middleware/claim_check/claim_check.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/workflow/errors.h"
#include "support/recording_middleware.h"

namespace loom::app {
namespace {

using loom::testing::Recorder;
using loom::testing::TempDir;
using loom::testing::Trace;

TEST(Boot, AnInvalidConfigOpensAndCreatesNothing) {
  TempDir dir;
  auto home = dir.path() / "home";
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;

  // Frozen without defineConfig: boot validates again.
  Config bad;
  bad.storage.home = home.string();
  bad.storage.eventStore.durability = "fast";
  EXPECT_THROW(boot(std::make_shared<const Config>(bad), workflows, tasks), ConfigValidationError);
  EXPECT_THROW(boot(nullptr, workflows, tasks), ConfigValidationError);

  // A secret environment variable that is too short is found at boot, still before the home.
  ::setenv("LOOM_BOOT_TEST_SHORT", "ab", 1);
  Config shortSecret;
  shortSecret.storage.home = home.string();
  shortSecret.security.redact = {{.name = "s", .env = "LOOM_BOOT_TEST_SHORT"}};
  EXPECT_THROW(boot(defineConfig(shortSecret), workflows, tasks), ConfigError);
  ::unsetenv("LOOM_BOOT_TEST_SHORT");

  // A bad loom.toml fails at load, before boot can run.
  auto toml = dir.path() / "loom.toml";
  std::ofstream(toml) << "[storage]\nhome = \"" << home.string() << "\"\ndurability = 1\n";
  EXPECT_THROW(loadConfigFile(toml), ConfigValidationError);

  EXPECT_FALSE(std::filesystem::exists(home));
  EXPECT_FALSE(std::filesystem::exists(home / "loom.db"));
}

struct EchoWorld {
  EchoWorld() {
    tasks.add({"echo", "tool"}, [this](const effects::EffectContext&, json::value in) {
      ++echoes;
      return json::value(json::object{{"token", "s3cr3t-value-1"}, {"in", in}});
    });
    workflows.add("wf", "", [](workflow::WorkflowContext& ctx) {
      return ctx.effect("call", "echo", json::value(json::object{{"q", 1}}));
    });
  }
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  int echoes = 0;
};

TEST(Boot, TheChainIsBuiltOnceKillSwitchOutermostThenRedactionThenUserMiddleware) {
  TempDir dir;
  EchoWorld world;
  auto trace = std::make_shared<Trace>();
  auto a = std::make_shared<Recorder>("a", trace);
  auto b = std::make_shared<Recorder>("b", trace);
  Config config;
  config.storage.home = dir.path().string();
  config.storage.eventStore.kind = "memory";
  config.security.redact = {{.name = "tok", .value = "s3cr3t-value-1"}};
  config.execution.effectMiddleware = {a, b};
  auto app = boot(defineConfig(config), world.workflows, world.tasks);

  EXPECT_EQ(app->chain().layerNames(),
            (std::vector<std::string>{"killSwitch", "redaction", "a", "b"}));
  EXPECT_EQ(&app->runtime().chain(), &app->chain());  // the one chain, built at boot

  auto r = app->runtime().start("wf", json::value(nullptr), {.id = "run-1"});
  ASSERT_EQ(r.status, kernel::ExecutionStatus::kCompleted) << json::toText(r.error);
  // Inward: each layer sees the input as the layers outside it left it.
  // Outward: the user middleware (inside redaction) see the real result; what leaves the
  // chain (the journal, the workflow) is scrubbed.
  EXPECT_EQ(
      trace->snapshot(),
      (std::vector<std::string>{
          R"(a in {"q":1})", R"(b in {"q":1,"path":["+a"]})",
          R"(b out {"token":"s3cr3t-value-1","in":{"q":1,"path":["+a","+b"]}})",
          R"(a out {"token":"s3cr3t-value-1","in":{"q":1,"path":["+a","+b"]},"seenBy":["b"]})"}));
  EXPECT_EQ(r.output.at("token"), "[REDACTED:tok]");
  EXPECT_EQ(json::toText(r.output.at("seenBy")), R"(["b","a"])");
  for (const auto& e : app->store().read("run-1")) {
    EXPECT_EQ(kernel::toText(e).find("s3cr3t"), std::string::npos) << kernel::toText(e);
  }

  // Kill switch outermost: a stopped effect reaches no layer at all.
  app->killSwitch().kill("echo");
  auto parked = app->runtime().start("wf", json::value(nullptr), {.id = "run-2"});
  EXPECT_EQ(parked.status, kernel::ExecutionStatus::kParked);
  EXPECT_EQ(parked.parkReason, "effectStopped");
  EXPECT_EQ(a->calls, 1);
  EXPECT_EQ(world.echoes, 1);
  app->killSwitch().unkill("echo");
  auto resumed = app->runtime().resume("run-2");
  EXPECT_EQ(resumed.status, kernel::ExecutionStatus::kCompleted);
  EXPECT_EQ(a->calls, 2);
}

TEST(Boot, AKillFromAnotherProcessIsSeenWithinTheRefreshWindow) {
  TempDir dir;
  EchoWorld world;
  Config config;
  config.storage.home = dir.path().string();
  config.storage.eventStore.durability = "normal";
  auto clock = std::make_shared<ManualClock>();
  auto app = boot(defineConfig(config), world.workflows, world.tasks, {.clock = clock});
  EXPECT_EQ(app->runtime().start("wf", json::value(nullptr)).status,
            kernel::ExecutionStatus::kCompleted);

  // `loom kill echo` in another process: another store on the same home database.
  middleware::KillSwitchStore cli({.path = (app->home() / "loom.db").string(), .clock = clock});
  cli.kill("echo");
  clock->advance(middleware::kKillSwitchRefreshMillis);
  auto r = app->runtime().start("wf", json::value(nullptr), {.id = "stopped"});
  EXPECT_EQ(r.status, kernel::ExecutionStatus::kParked);
  EXPECT_EQ(world.echoes, 1);
  cli.unkill("echo");
  clock->advance(middleware::kKillSwitchRefreshMillis);
  EXPECT_EQ(app->runtime().resume("stopped").status, kernel::ExecutionStatus::kCompleted);
  EXPECT_EQ(app->killSwitch().list().size(), 0u);
}

// Every byte of every file under `dir`.
std::string allBytesUnder(const std::filesystem::path& dir) {
  std::string all;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    all += bytes.str();
  }
  return all;
}

// Runs a workflow whose effect takes secrets as input, returns secrets (in values and keys)
// and fails with a secret in its error, through an app booted on a SQLite home.
void runLeakyWorkflow(const std::filesystem::path& home, bool redact,
                      const std::function<void(const std::string&)>& checkWhileOpen) {
  effects::TaskRegistry tasks;
  tasks.add({"leaky", "tool"}, [](const effects::EffectContext&, json::value in) {
    return json::value(
        json::object{{"echo", in}, {"token", "tok_abcdefgh"}, {"literal-secret-123", "as a key"}});
  });
  tasks.add({"failing", "tool"}, [](const effects::EffectContext&, json::value) -> json::value {
    throw FailedPreconditionError("upstream rejected literal-secret-123");
  });
  workflow::WorkflowRegistry workflows;
  workflows.add("leaky", "", [](workflow::WorkflowContext& ctx) {
    json::object input{{"password", "literal-secret-123"},
                       {"apiKey", std::getenv("LOOM_BOOT_TEST_TOKEN")}};
    json::value first = ctx.effect("leak", "leaky", input);
    std::string error;
    try {
      ctx.effect("fail", "failing", input);
    } catch (const workflow::StepFailedError& e) {
      error = e.what();
    }
    return json::value(json::object{{"first", first}, {"error", error}});
  });
  Config config;
  config.storage.home = home.string();
  if (redact) {
    config.security.redact = {{.name = "literal", .value = "literal-secret-123"},
                              {.name = "env", .env = "LOOM_BOOT_TEST_TOKEN"},
                              {.name = "token", .pattern = "tok_[a-z0-9]{8}"}};
  }
  auto app = boot(defineConfig(config), workflows, tasks);
  auto r = app->runtime().start("leaky", json::value(nullptr));
  ASSERT_EQ(r.status, kernel::ExecutionStatus::kCompleted) << json::toText(r.error);
  if (redact) {
    EXPECT_EQ(r.output.at("first").at("token"), "[REDACTED:token]");
    EXPECT_EQ(r.output.at("first").at("echo").at("apiKey"), "[REDACTED:env]");
    EXPECT_TRUE(r.output.at("first").as_object().contains("[REDACTED:literal]"));
    EXPECT_NE(std::string(r.output.at("error").as_string()).find("[REDACTED:literal]"),
              std::string::npos);
  }
  checkWhileOpen(allBytesUnder(home));  // the WAL file too
}

TEST(Boot, RedactedSecretsAppearInNoFileOfTheHome) {
  ::setenv("LOOM_BOOT_TEST_TOKEN", "env-secret-abcdef", 1);
  const std::vector<std::string> secrets = {"literal-secret-123", "env-secret-abcdef",
                                            "tok_abcdefgh"};
  TempDir redacted;
  runLeakyWorkflow(redacted.path(), true, [&](const std::string& bytes) {
    for (const auto& s : secrets) EXPECT_EQ(bytes.find(s), std::string::npos) << s;
  });
  std::string closed = allBytesUnder(redacted.path());
  EXPECT_NE(closed.find("[REDACTED:token]"), std::string::npos);  // the log is there...
  for (const auto& s : secrets) EXPECT_EQ(closed.find(s), std::string::npos) << s;

  // The control: without redaction the same bytes do hold every secret, so the grep works.
  TempDir plain;
  runLeakyWorkflow(plain.path(), false, [](const std::string&) {});
  std::string leaked = allBytesUnder(plain.path());
  for (const auto& s : secrets) EXPECT_NE(leaked.find(s), std::string::npos) << s;
  ::unsetenv("LOOM_BOOT_TEST_TOKEN");
}

// The home's small blobs are put by the log's own writer (ADR 0017): a put is one of the log's
// group commits, so concurrent runs' puts never wait in SQLite's busy handler for its commits.
TEST(Boot, TheHomesPackedBlobsArePutByTheLogsWriter) {
  TempDir dir;
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  Config config;
  config.storage.home = (dir.path() / "home").string();
  auto app = boot(defineConfig(config), workflows, tasks);
  auto* log = dynamic_cast<kernel::SqliteEventStore*>(&app->store());
  ASSERT_NE(nullptr, log);
  int64_t commits = log->commits();
  std::string address = app->contentStore()->put("a small tool result");
  EXPECT_EQ(commits + 1, log->commits()) << "the put was not one of the log's commits";
  EXPECT_EQ("a small tool result", app->contentStore()->get(address));
}

// Runs `sql` on a connection of its own to `database` (a test's hand on the home's file).
void runSql(const std::string& database, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(SQLITE_OK, sqlite3_open(database.c_str(), &db));
  EXPECT_EQ(SQLITE_OK, sqlite3_exec(db, sql, nullptr, nullptr, nullptr)) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// A claim-check blob whose write with the log's commit is lost (ADR 0019; here a trigger
// refuses the row): the step that cites it records nothing, the run stops as the content store
// being unavailable (not failed), and a resume once the store takes writes again runs the step
// again and completes.
TEST(Boot, ALostClaimCheckBlobLeavesTheRunResumable) {
  TempDir dir;
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  int calls = 0;
  tasks.add({.id = "fetch", .kind = "tool", .description = "a large result"},
            [&](const effects::EffectContext&, json::value) -> json::value {
              ++calls;
              return json::value(std::string(3000, 'x'));
            });
  workflows.add("wf", "one tool call", [](workflow::WorkflowContext& ctx) {
    return ctx.effect(effects::toolStepId("agent", 1, 0), "fetch", json::object{});
  });
  Config config;
  config.storage.home = (dir.path() / "home").string();
  middleware::ClaimCheckConfig claimCheck;
  claimCheck.toolIds = std::vector<std::string>{"fetch"};
  claimCheck.inlineCapBytes = 512;
  config.execution.claimCheck = claimCheck;
  const std::string database = (dir.path() / "home" / "loom.db").string();
  auto rawExec = [&](const char* sql) { runSql(database, sql); };
  {
    auto app = boot(defineConfig(config), workflows, tasks);
    rawExec(
        "CREATE TRIGGER refuse_blobs BEFORE INSERT ON blobs "
        "BEGIN SELECT RAISE(ABORT, 'the disk is full'); END");
    try {
      app->runtime().start("wf", nullptr, {.id = "r"});
      ADD_FAILURE() << "the run went on without its blob";
    } catch (const ContentStoreUnavailableError& e) {
      std::string what = e.what();
      EXPECT_NE(std::string::npos, what.find("'r'")) << what;
      EXPECT_NE(std::string::npos, what.find("the disk is full")) << what;
      EXPECT_NE(std::string::npos, what.find("step 'agent#turn:1:tool:0'")) << what;
      EXPECT_NE(std::string::npos, what.find("`loom resume r`")) << what;
    }
    std::optional<kernel::ExecutionInfo> info = app->store().info("r");
    ASSERT_TRUE(info);
    EXPECT_EQ(kernel::ExecutionStatus::kRunning, info->status) << "the run was not left resumable";
    EXPECT_EQ(2, info->nextSeq) << "something of the step was recorded";
  }
  rawExec("DROP TRIGGER refuse_blobs");
  auto app = boot(defineConfig(config), workflows, tasks);
  workflow::RunResult result = app->runtime().resume("r");
  EXPECT_EQ(kernel::ExecutionStatus::kCompleted, result.status);
  EXPECT_EQ(2, calls);
  EXPECT_TRUE(app->contentStore()->has(
      content::sha256Hex(json::toText(json::value(std::string(3000, 'x'))))));
}

// The same in a batch of parallel tool calls: the call whose blob was lost runs again on resume;
// the call beside it, already done, is journaled first and does not.
TEST(Boot, ALostBlobInParallelCallsRunsOnlyItsOwnCallAgain) {
  TempDir dir;
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  std::atomic<int> lostCalls{0}, keptCalls{0};
  tasks.add({.id = "lost", .kind = "tool", .description = "a result whose blob is refused"},
            [&](const effects::EffectContext&, json::value) -> json::value {
              ++lostCalls;
              // Both calls in flight when this one's result is refused, however the threads are
              // scheduled (a call not started by then is not started: the run stops).
              auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
              while (keptCalls.load() == 0 && std::chrono::steady_clock::now() < deadline) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
              }
              return json::value(std::string(3000, 'x'));
            });
  tasks.add({.id = "kept", .kind = "tool", .description = "a result whose blob is stored"},
            [&](const effects::EffectContext&, json::value) -> json::value {
              ++keptCalls;
              return json::value(std::string(2000, 'y'));
            });
  workflows.add("wf", "two tool calls at once", [](workflow::WorkflowContext& ctx) {
    auto outcomes = ctx.effects({{effects::toolStepId("agent", 1, 0), "lost", json::object{}},
                                 {effects::toolStepId("agent", 1, 1), "kept", json::object{}}},
                                2);
    return json::value(static_cast<int64_t>(outcomes.size()));
  });
  Config config;
  config.storage.home = (dir.path() / "home").string();
  middleware::ClaimCheckConfig claimCheck;
  claimCheck.toolIds = std::vector<std::string>{"lost", "kept"};
  claimCheck.inlineCapBytes = 512;
  config.execution.claimCheck = claimCheck;
  const std::string database = (dir.path() / "home" / "loom.db").string();
  {
    auto app = boot(defineConfig(config), workflows, tasks);
    runSql(database,
           "CREATE TRIGGER refuse_blobs BEFORE INSERT ON blobs WHEN NEW.size = 3002 "
           "BEGIN SELECT RAISE(ABORT, 'the disk is full'); END");
    EXPECT_THROW(app->runtime().start("wf", nullptr, {.id = "r"}), ContentStoreUnavailableError);
    EXPECT_EQ(3, app->store().info("r")->nextSeq) << "the kept call was not journaled";
  }
  runSql(database, "DROP TRIGGER refuse_blobs");
  auto app = boot(defineConfig(config), workflows, tasks);
  EXPECT_EQ(kernel::ExecutionStatus::kCompleted, app->runtime().resume("r").status);
  EXPECT_EQ(2, lostCalls.load());
  EXPECT_EQ(1, keptCalls.load()) << "a call journaled before the stop ran again";
}

// A claim-check on the app's own store (the Node.js package's claimCheckMiddleware): one
// config, two apps on two homes, each binds its own store at boot; what it offloads is in
// that app's content store, and resolves from there.
TEST(Boot, AClaimCheckOnTheAppStoreIsBoundToEachAppsOwnStore) {
  TempDir dir;
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  tasks.add({"big", "tool"}, [](const effects::EffectContext&, json::value) {
    return json::value(std::string(3000, 'x'));
  });
  workflows.add("wf", "", [](workflow::WorkflowContext& ctx) {
    return ctx.effect("call", "big", json::value(nullptr));
  });
  middleware::ClaimCheckOptions options;
  options.name = "offload";
  options.inlineCapBytes = 1024;
  options.retain = true;
  auto entry = std::make_shared<middleware::AppStoreClaimCheck>(std::move(options));
  // Outside an App's chain it refuses to run.
  effects::EffectChain alone({entry});
  auto terminal = [](const effects::EffectContext&, json::value in) { return in; };
  EXPECT_THROW(alone.invoke({}, json::value(nullptr), terminal), FailedPreconditionError);
  for (std::string home : {"one", "two"}) {
    Config config;
    config.storage.home = (dir.path() / home).string();
    config.execution.effectMiddleware = {entry};
    auto app = boot(defineConfig(config), workflows, tasks);
    EXPECT_EQ(app->chain().layerNames(), (std::vector<std::string>{"killSwitch", "offload"}));
    auto r = app->runtime().start("wf", json::value(nullptr), {.id = "run-" + home});
    ASSERT_EQ(r.status, kernel::ExecutionStatus::kCompleted) << json::toText(r.error);
    ASSERT_TRUE(r.output.is_object()) << json::toText(r.output);
    EXPECT_EQ(r.output.at("retain"), true);
    auto original = middleware::resolveClaimCheck(*app->contentStore(), r.output);
    ASSERT_TRUE(original);
    EXPECT_EQ(*original, json::value(std::string(3000, 'x')));
  }

  // Its store is the app's: one handed in is refused.
  middleware::ClaimCheckOptions withStore;
  withStore.name = "offload";
  withStore.store = std::make_shared<content::MemoryContentStore>(systemClock());
  EXPECT_THROW(middleware::AppStoreClaimCheck{withStore}, ConfigError);
}

}  // namespace
}  // namespace loom::app
