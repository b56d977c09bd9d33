// `loom run --config` for the program's own workflows:
// the file's groups apply to a registered workflow, the run records the file, and `loom
// signal`/`loom resume` in later processes boot with it again, so a secret in a signal payload
// is redacted after a restart exactly as before it. Tried on the real binary and home.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

constexpr const char* kSecret = "tok-8c1f2e9a77";

std::string writeConfig(const TempDir& dir, const std::string& home) {
  return dir
      .write("loom.toml", "[storage]\nhome = \"" + home +
                              "\"\n\n[[security.redact]]\nname = \"token\"\nvalue = \"" + kSecret +
                              "\"\n")
      .string();
}

// Parks example.approval as `id` under a config file in `dir`; returns the file's path.
std::string parkUnderConfig(const TempDir& dir, const std::string& home, const std::string& id) {
  std::string config = writeConfig(dir, home);
  Outcome run = runLoom({"run", "example.approval", "--id", id, "--config", config, "--json"}, dir);
  EXPECT_EQ(run.exitCode, 0) << run.err;
  return config;
}

TEST(RunConfig, ASignalInALaterProcessIsRedactedByTheConfigTheRunRecorded) {
  TempDir dir;
  std::string home = dir / "home";
  std::string config = writeConfig(dir, home);
  Outcome run = runLoom({"run", "example.approval", "--id", "c1", "--config", config, "--input",
                         std::string("{\"note\":\"") + kSecret + "\"}", "--json"},
                        dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.json().at("status"), "parked");
  EXPECT_TRUE(std::filesystem::exists(home + "/loom.db")) << "storage.home of the file applies";

  // No --config here: the run's first event names the file.
  Outcome signaled = runLoom({"--home", home, "signal", "c1", "approve",
                              std::string("{\"by\":\"") + kSecret + "\"}", "--json"},
                             dir);
  ASSERT_EQ(signaled.exitCode, 0) << signaled.err;
  json::value done = signaled.json();
  EXPECT_EQ(done.at("status"), "completed");
  EXPECT_EQ(done.at("output"),
            json::parse(R"({"approval":{"by":"[REDACTED:token]"}})", "expected"));
  EXPECT_FALSE(folderContains(home, kSecret)) << "the secret reached the home";

  Outcome log = runLoom({"--home", home, "log", "c1"}, dir);
  ASSERT_EQ(log.exitCode, 0) << log.err;
  EXPECT_NE(log.out.find("configFile"), std::string::npos) << log.out;
}

TEST(RunConfig, AResumeRefusesWhenTheRecordedConfigIsGoneAndSaysWhatToDo) {
  TempDir dir;
  std::string home = dir / "home";
  std::string config = parkUnderConfig(dir, home, "c2");
  std::filesystem::remove(config);

  Outcome resumed = runLoom({"--home", home, "resume", "c2"}, dir);
  EXPECT_NE(resumed.exitCode, 0) << "a run must never continue without the config it ran under";
  EXPECT_NE(resumed.err.find("was started with --config " + config), std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("pass --config FILE"), std::string::npos) << resumed.err;

  // Given a config explicitly, it continues under that one.
  std::string again = writeConfig(dir, home);
  Outcome withConfig = runLoom({"--home", home, "resume", "c2", "--config", again, "--json"}, dir);
  ASSERT_EQ(withConfig.exitCode, 0) << withConfig.err;
  EXPECT_EQ(withConfig.json().at("status"), "parked");
}

TEST(RunConfig, ARecordedConfigFileThatIsNotAPathIsCorruptNeverNoConfig) {
  TempDir dir;
  std::string home = dir / "home";
  parkUnderConfig(dir, home, "c3");
  // Changed outside Loom (a row from before checksums: NULL passes the checksum check).
  std::string sql =
      "UPDATE events SET body = json_set(body, '$.configFile', 42), checksum = NULL "
      "WHERE execution_id = 'c3' AND seq = 1";
  ASSERT_EQ(std::system(("sqlite3 " + home + "/loom.db \"" + sql + "\"").c_str()), 0);

  Outcome resumed = runLoom({"--home", home, "resume", "c3"}, dir);
  EXPECT_NE(resumed.exitCode, 0) << "resumed without the config it ran under: " << resumed.out;
  EXPECT_NE(resumed.err.find("corrupt event in execution 'c3' at seq 1"), std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("pass --config FILE"), std::string::npos) << resumed.err;
}

// The same row met by a worker: the run is refused and stays submitted, never run under the
// program's default config (which a run without a configFile booted before it in that worker).
TEST(RunConfig, AWorkerRefusesARunWhoseRecordedConfigFileIsNotAPath) {
  TempDir dir;
  std::string home = dir / "home";
  std::string config = writeConfig(dir, home);
  ASSERT_EQ(runLoom({"--home", home, "run", "example.steps", "--id", "plain", "--submit",
                     "--input", R"({"steps": 1})"},
                    dir)
                .exitCode,
            0);
  ASSERT_EQ(runLoom({"--home", home, "run", "example.steps", "--id", "c4", "--submit", "--config",
                     config, "--input", R"({"steps": 1})"},
                    dir)
                .exitCode,
            0);
  std::string sql =
      "UPDATE events SET body = json_set(body, '$.configFile', 42), checksum = NULL "
      "WHERE execution_id = 'c4' AND seq = 1";
  ASSERT_EQ(std::system(("sqlite3 " + home + "/loom.db \"" + sql + "\"").c_str()), 0);
  Outcome worker = runLoom({"--home", home, "worker", "--once", "--concurrency", "1"}, dir);
  EXPECT_EQ(worker.exitCode, 1) << worker.out;
  EXPECT_NE(worker.out.find("worker: plain: completed"), std::string::npos) << worker.out;
  EXPECT_NE(worker.out.find("worker: c4: could not start: corrupt event in execution 'c4' at seq 1"),
            std::string::npos)
      << worker.out;
  Outcome listed = runLoom({"--home", home, "ls", "--json"}, dir);
  EXPECT_NE(listed.out.find(R"("id":"c4","workflow":"example.steps","status":"submitted")"),
            std::string::npos)
      << listed.out;
}

TEST(RunConfig, AnAgentAppTakesNoSecondConfig) {
  TempDir dir;
  std::string config = writeConfig(dir, dir / "home");
  Outcome run = runLoom(
      {"run", std::string(LOOM_SOURCE_DIR) + "/examples/agents/research.toml", "--config", config},
      dir);
  EXPECT_EQ(run.exitCode, 2) << run.err;
  EXPECT_NE(run.err.find("is its config"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace loom::testing
