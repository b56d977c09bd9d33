// The `loom` binary with every store on PostgreSQL (LOOM_DATABASE_URL, or a config file's
// [storage] url), against the test cluster (support/postgres_server.h). Each "machine" is a
// separate home folder (its own working files) over one shared schema: what one machine runs,
// the others list, resume, sweep, erase and export; nothing lands in a home's loom.db, and the
// password never appears in an output or a file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include "support/loom_process.h"
#include "support/postgres_server.h"

namespace loom::testing {
namespace {

const std::string kExamples = std::string(LOOM_SOURCE_DIR) + "/examples/agents/";

// The password of a postgresql://user:password@host/... url.
std::string passwordOf(const std::string& url) {
  auto start = url.find("://") + 3;
  auto colon = url.find(':', start);
  auto at = url.find('@', start);
  return colon < at ? url.substr(colon + 1, at - colon - 1) : "";
}

class PostgresCli : public ::testing::Test {
 protected:
  void SetUp() override {
    LOOM_SKIP_WITHOUT_POSTGRES();
    url_ = testPostgresUrl();
    schema_ = testSchemaFor(dir_.path());
    env_ = {"LOOM_DATABASE_URL=" + url_, "LOOM_DATABASE_SCHEMA=" + schema_};
    Outcome migrated = cli({"db", "migrate"});
    ASSERT_EQ(0, migrated.exitCode) << migrated.err;
  }

  // `loom args...` on this schema, from the folder of machine `machine` (its own home).
  Outcome cli(std::vector<std::string> args, const std::string& machine = "a",
              std::vector<std::string> extraEnv = {}) {
    args.insert(args.begin(), {"--home", home(machine)});
    std::vector<std::string> env = env_;
    env.insert(env.end(), extraEnv.begin(), extraEnv.end());
    Outcome o = runLoom(args, dir_, env);
    outputs_.push_back(o.out + o.err);
    return o;
  }
  std::string home(const std::string& machine) const { return dir_ / ("machine-" + machine); }
  std::string stepsInput(int steps, int sleepMs) const {
    return "{\"steps\":" + std::to_string(steps) + ",\"sleepMs\":" + std::to_string(sleepMs) +
           ",\"witness\":\"" + witness() + "\"}";
  }
  std::string witness() const { return dir_ / "witness.txt"; }
  // The compliance example on machine a: run e1 for alice and e2 for bob, sealed.
  void runAliceAndBob() {
    for (auto [id, subject] : {std::pair{"e1", "alice"}, std::pair{"e2", "bob"}}) {
      Outcome run = cli({"run", kExamples + "compliance.toml", "--id", id, "--subject", subject,
                         "--json"},
                        "a", masterKey_);
      ASSERT_EQ(0, run.exitCode) << run.err;
      ASSERT_EQ(run.json().at("status"), "completed") << run.out;
    }
  }

  // An agent app ("hello from NAME") reading its master key `key` from a key file of its own;
  // `more` is appended to it. Returns the app and the key file.
  std::pair<std::string, std::string> keyedApp(const std::string& name, const std::string& key,
                                               const std::string& more = "") {
    std::string keyFile = dir_ / ("key-" + name);
    std::ofstream(keyFile) << key << "\n";
    std::filesystem::permissions(
        keyFile, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::string script = dir_ / "answer.json";
    std::ofstream(script) << R"({"turns": [{"answer": "done"}]})";
    std::string file = dir_ / ("app-" + name + ".toml");
    std::ofstream(file) << "[agent]\nname = \"keyed\"\nprompt = \"hello from " << name
                        << "\"\n\n[model]\nkind = \"scripted\"\nscript = \"" << script
                        << "\"\n\n[security.keys]\nfile = \"" << keyFile << "\"\n" << more;
    return {file, keyFile};
  }

  void TearDown() override {
    if (url_.empty()) return;
    std::string password = passwordOf(url_);
    ASSERT_FALSE(password.empty()) << "the test cluster's url has a password";
    for (const auto& text : outputs_) EXPECT_EQ(text.find(password), std::string::npos) << text;
    EXPECT_FALSE(folderContains(dir_.path().string(), password)) << "the password reached a file";
  }

  TempDir dir_;
  std::string url_;
  std::string schema_;
  std::vector<std::string> env_;
  std::vector<std::string> outputs_;
  const std::vector<std::string> masterKey_ = {
      "LOOM_MASTER_KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"};
};

TEST_F(PostgresCli, ARunLivesInTheSchemaAndEveryMachineListsAndReadsIt) {
  Outcome run = cli({"run", "example.steps", "--id", "p1", "--input", stepsInput(3, 0), "--json"});
  ASSERT_EQ(0, run.exitCode) << run.err;
  EXPECT_EQ(run.json().at("status"), "completed");
  EXPECT_FALSE(std::filesystem::exists(home("a") + "/loom.db")) << "every store is on the server";

  Outcome listed = cli({"ls", "--json"}, "b");
  ASSERT_EQ(0, listed.exitCode) << listed.err;
  ASSERT_EQ(listed.json().as_array().size(), 1u);
  EXPECT_EQ(listed.json().at(0).at("id"), "p1");
  EXPECT_EQ(listed.json().at(0).at("status"), "completed");
  Outcome log = cli({"log", "p1"}, "b");
  ASSERT_EQ(0, log.exitCode) << log.err;
  EXPECT_NE(log.out.find("step-3"), std::string::npos) << log.out;

  Outcome missing = cli({"log", "nope"}, "b");
  EXPECT_EQ(1, missing.exitCode);
  EXPECT_NE(missing.err.find("the postgresql schema '" + schema_ + "'"), std::string::npos)
      << missing.err;
}

TEST_F(PostgresCli, ARunKilledOnOneMachineIsResumedOnAnotherRunningEachStepOnce) {
  constexpr int kSteps = 30;
  Child run({"--home", home("a"), "run", "example.steps", "--id", "k1", "--input",
             stepsInput(kSteps, 20)},
            dir_, env_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (readLines(witness()).size() < 10) {
    ASSERT_FALSE(run.exited()) << "the run ended before it could be killed";
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the run made no progress";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  run.kill(SIGKILL);
  ASSERT_EQ(run.wait().termSignal, SIGKILL);
  std::size_t linesAtKill = readLines(witness()).size();

  Outcome listed = cli({"ls", "--json"}, "b");
  ASSERT_EQ(0, listed.exitCode) << listed.err;
  EXPECT_EQ(listed.json().at(0).at("status"), "orphaned");
  Outcome resumed = cli({"resume", "k1", "--json"}, "b");
  ASSERT_EQ(0, resumed.exitCode) << resumed.err;
  json::value result = resumed.json();
  EXPECT_EQ(result.at("status"), "completed");
  int64_t replayed = result.at("replayedSteps").to_number<int64_t>();
  EXPECT_EQ(replayed + result.at("effectsRun").to_number<int64_t>(), kSteps);
  EXPECT_GE(replayed + 1, static_cast<int64_t>(linesAtKill));

  std::map<std::string, int> seen;
  for (const auto& line : readLines(witness())) ++seen[line];
  int repeated = 0;
  for (int i = 1; i <= kSteps; ++i) {
    int n = seen["step-" + std::to_string(i)];
    EXPECT_GE(n, 1) << "step-" << i << " never ran";
    repeated += n > 1 ? 1 : 0;
  }
  EXPECT_LE(repeated, 1) << "only the step in flight at the kill may run twice";
}

TEST_F(PostgresCli, ARunSubmittedOnOneMachineIsRunByAWorkerOnAnother) {
  Outcome submitted = cli(
      {"run", "example.steps", "--id", "s1", "--input", stepsInput(4, 0), "--submit", "--json"});
  ASSERT_EQ(0, submitted.exitCode) << submitted.err;
  EXPECT_EQ(submitted.json().at("status"), "submitted");
  Outcome worked = cli({"worker", "--once"}, "b");
  ASSERT_EQ(0, worked.exitCode) << worked.err;
  EXPECT_NE(worked.out.find("s1: completed"), std::string::npos) << worked.out;
  Outcome listed = cli({"ls", "--json"}, "a");
  EXPECT_EQ(listed.json().at(0).at("status"), "completed");
  EXPECT_EQ(readLines(witness()).size(), 4u) << "each step ran once";
}

// LISTEN/NOTIFY: a worker that polls once a minute starts a run submitted on another machine
// within seconds.
TEST_F(PostgresCli, ASubmissionWakesAWaitingWorkerLongBeforeItsPoll) {
  Child worker({"--home", home("b"), "worker", "--poll-ms", "60000"}, dir_, env_);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // its first look found nothing
  auto submittedAt = std::chrono::steady_clock::now();
  ASSERT_EQ(0, cli({"run", "example.steps", "--id", "n1", "--input", stepsInput(2, 0), "--submit"})
                   .exitCode);
  bool completed = false;
  while (!completed && std::chrono::steady_clock::now() - submittedAt < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Outcome listed = cli({"ls", "--json"}, "a");
    completed = listed.exitCode == 0 && listed.json().at(0).at("status") == "completed";
  }
  EXPECT_TRUE(completed) << "the worker slept through the submission";
  worker.kill(SIGTERM);
  Outcome said = worker.wait();
  outputs_.push_back(said.out + said.err);
  EXPECT_NE(said.out.find("n1: completed"), std::string::npos) << said.out;
}

TEST_F(PostgresCli, AConfigFilesStorageUrlMovesEveryStoreAndConfigCheckHidesThePassword) {
  TempDir config("pgconfig");  // the file holds the password: outside the checked folder
  std::string file = config / "loom.toml";
  std::ofstream(file) << "[storage]\nhome = \"" << home("c") << "\"\nurl = \"" << url_
                      << "\"\nschema = \"" << schema_ << "\"\n";
  Outcome checked = runLoom({"config", "check", file}, dir_, {"LOOM_DATABASE_URL="});
  outputs_.push_back(checked.out + checked.err);
  ASSERT_EQ(0, checked.exitCode) << checked.err;
  EXPECT_NE(checked.out.find("storage.url"), std::string::npos) << checked.out;
  EXPECT_NE(checked.out.find(":***@"), std::string::npos) << checked.out;

  Outcome run = runLoom({"run", "example.steps", "--config", file, "--id", "f1", "--input",
                         stepsInput(2, 0), "--json"},
                        dir_, {"LOOM_DATABASE_URL="});
  outputs_.push_back(run.out + run.err);
  ASSERT_EQ(0, run.exitCode) << run.err;
  EXPECT_FALSE(std::filesystem::exists(home("c") + "/loom.db"));
  Outcome listed = cli({"ls", "--json"}, "b");  // LOOM_DATABASE_URL: the same schema
  ASSERT_EQ(0, listed.exitCode) << listed.err;
  EXPECT_EQ(listed.json().at(0).at("id"), "f1");

  std::ofstream(config / "bad.toml")
      << "[storage]\nurl = \"" << url_ << "\"\n[storage.contentStore]\nkind = \"sqlite\"\n";
  Outcome bad = runLoom({"config", "check", config / "bad.toml"}, dir_);
  outputs_.push_back(bad.out + bad.err);
  EXPECT_EQ(1, bad.exitCode);
  EXPECT_NE((bad.out + bad.err).find("with storage.url the content store is PostgreSQL's"),
            std::string::npos)
      << bad.out << bad.err;
}

TEST_F(PostgresCli, ASchemaNeverMigratedAndAWrongPasswordAreRefusedSayingWhatToDo) {
  Outcome fresh = runLoom({"--home", home("a"), "ls"}, dir_,
                          {"LOOM_DATABASE_URL=" + url_, "LOOM_DATABASE_SCHEMA=never_migrated"});
  outputs_.push_back(fresh.out + fresh.err);
  EXPECT_EQ(1, fresh.exitCode);
  EXPECT_NE(fresh.err.find("loom db migrate"), std::string::npos) << fresh.err;

  std::string wrong = url_;
  std::string password = passwordOf(url_);
  wrong.replace(wrong.find(password), password.size(), "not-the-password");
  Outcome refused = runLoom({"--home", home("a"), "ls"}, dir_, {"LOOM_DATABASE_URL=" + wrong});
  EXPECT_EQ(1, refused.exitCode);
  EXPECT_NE(refused.err.find("cannot connect to postgresql"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("not-the-password"), std::string::npos) << refused.err;
}

TEST_F(PostgresCli, TheKillSwitchSetOnOneMachineStopsRunsOnAnother) {
  Outcome killed = cli({"kill", "example.step"}, "b");
  ASSERT_EQ(0, killed.exitCode) << killed.err;
  Outcome run = cli({"run", "example.steps", "--id", "ks", "--input", stepsInput(2, 0), "--json"});
  EXPECT_NE(run.json().at("status"), "completed") << run.out;
  EXPECT_TRUE(readLines(witness()).empty()) << "a stopped effect ran";
  ASSERT_EQ(0, cli({"unkill", "example.step"}, "b").exitCode);
  Outcome resumed = cli({"resume", "ks", "--json"}, "b");
  ASSERT_EQ(0, resumed.exitCode) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "completed");
}

TEST_F(PostgresCli, ErasureExportAndTheSweepWorkOnTheSharedSchema) {
  const std::vector<std::string>& key = masterKey_;
  ASSERT_NO_FATAL_FAILURE(runAliceAndBob());
  Outcome exported = cli({"export", "alice"}, "b", key);
  ASSERT_EQ(0, exported.exitCode) << exported.err;
  EXPECT_NE(exported.out.find("\"e1\""), std::string::npos);
  EXPECT_EQ(exported.out.find("\"e2\""), std::string::npos) << "bob's run is not alice's";

  Outcome sealed = cli({"log", "e2"}, "b");  // no key on this machine
  EXPECT_EQ(1, sealed.exitCode);
  EXPECT_NE(sealed.err.find("is sealed"), std::string::npos) << sealed.err;

  Outcome erased = cli({"erase", "alice"}, "b", key);
  ASSERT_EQ(0, erased.exitCode) << erased.err;
  Outcome log = cli({"log", "e1"}, "a", key);
  ASSERT_EQ(0, log.exitCode) << log.err;
  EXPECT_NE(log.out.find("\"erased\""), std::string::npos) << log.out;
  EXPECT_EQ(log.out.find("Read the first pages"), std::string::npos) << "alice's input is gone";
  Outcome bob = cli({"log", "e2"}, "a", key);
  ASSERT_EQ(0, bob.exitCode) << bob.err;
  EXPECT_NE(bob.out.find("Read the first pages"), std::string::npos) << "bob's run is intact";

  // Bob's run still cites the pages both runs fetched: the sweep keeps every blob, and bob's
  // export, which reads them, still works.
  Outcome swept = cli({"sweep", "--json"}, "c", key);
  ASSERT_EQ(0, swept.exitCode) << swept.err;
  EXPECT_EQ(swept.json().at("deleted"), 0);
  EXPECT_GT(swept.json().at("kept").at("loadBearing").to_number<int64_t>(), 0);
  Outcome bobExport = cli({"export", "bob"}, "c", key);
  EXPECT_EQ(0, bobExport.exitCode) << bobExport.err;
  EXPECT_NE(bobExport.out.find("\"e2\""), std::string::npos);
}

// Retention with archive = true on the server: the segment goes into the schema's archive
// tables, so every machine reads the archived logs, the sweep on any machine keeps the blobs
// they cite, and export and erasure cover them.
TEST_F(PostgresCli, RetentionArchivesIntoTheSchemaAndEveryMachineReadsIt) {
  const std::vector<std::string>& key = masterKey_;
  ASSERT_NO_FATAL_FAILURE(runAliceAndBob());
  std::string retention = dir_ / "retention.toml";
  std::ofstream(retention) << "[storage.retention]\nafterDays = 0\n";  // archive = true
  Outcome retained = cli({"retention", "run", "--config", retention, "--json"}, "a", key);
  ASSERT_EQ(0, retained.exitCode) << retained.err;
  EXPECT_EQ(retained.json().at("archived"), 2) << retained.out;
  EXPECT_EQ(retained.json().at("removed"), 2);
  std::string segment(retained.json().at("segment").as_string());
  EXPECT_NE(segment.find(schema_ + ".archive_segments/segment-"), std::string::npos) << segment;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(home("a"))) {
    EXPECT_TRUE(entry.is_directory()) << entry.path() << " stayed on machine a";
  }

  Outcome live = cli({"ls", "--json"}, "b", key);
  ASSERT_EQ(0, live.exitCode) << live.err;
  json::value listed = live.json();
  EXPECT_EQ(listed.as_array().size(), 2u) << "the archived runs are listed";
  for (const auto& run : listed.as_array()) {
    EXPECT_EQ(run.at("archived"), true) << "the live logs are gone: " << live.out;
  }
  Outcome log = cli({"log", "e2"}, "b", key);  // another machine reads the archived copy
  ASSERT_EQ(0, log.exitCode) << log.err;
  EXPECT_NE(log.out.find("Read the first pages"), std::string::npos) << log.out;

  // The archived runs cite the pages they fetched: the sweep on a third machine keeps them.
  Outcome swept = cli({"sweep", "--json"}, "c", key);
  ASSERT_EQ(0, swept.exitCode) << swept.err;
  const json::value sweep = swept.json();  // the pointer below points into it
  ASSERT_EQ(sweep.at("deleted"), 0) << swept.out;
  const auto* pinned = sweep.at("kept").as_object().if_contains("archive");
  ASSERT_NE(pinned, nullptr) << swept.out;
  EXPECT_GT(pinned->to_number<int64_t>(), 0) << "the archive pins what it cites: " << swept.out;

  Outcome exported = cli({"export", "alice"}, "c", key);
  ASSERT_EQ(0, exported.exitCode) << exported.err;
  EXPECT_NE(exported.out.find("\"e1\""), std::string::npos) << exported.out;
  EXPECT_NE(exported.out.find("\"archive\""), std::string::npos) << "exported from the archive";
  EXPECT_EQ(exported.out.find("\"e2\""), std::string::npos) << "bob's run is not alice's";

  Outcome erased = cli({"erase", "alice"}, "b", key);
  ASSERT_EQ(0, erased.exitCode) << erased.err;
  Outcome alice = cli({"log", "e1"}, "a", key);
  ASSERT_EQ(0, alice.exitCode) << alice.err;
  EXPECT_EQ(alice.out.find("Read the first pages"), std::string::npos) << "alice's input is gone";
  Outcome bob = cli({"log", "e2"}, "c", key);
  ASSERT_EQ(0, bob.exitCode) << bob.err;
  EXPECT_NE(bob.out.find("Read the first pages"), std::string::npos) << "bob's run is intact";
}

// `loom retention run` SIGKILLed at moments along its way on the server (selecting, writing,
// uploading, removing): after each kill every run is live or archived, never neither; the run
// that finishes leaves every log archived and nothing in the staging folder.
TEST_F(PostgresCli, RetentionKilledAtAnyMomentLosesNoRun) {
  std::vector<std::string> ids;
  for (int i = 0; i < 16; ++i) {
    ids.push_back("r" + std::to_string(i));
    Outcome run = cli({"run", "example.steps", "--id", ids.back(), "--input", "{\"steps\":8}"});
    ASSERT_EQ(0, run.exitCode) << run.err;
  }
  std::string retention = dir_ / "retention.toml";
  std::ofstream(retention) << "[storage.retention]\nafterDays = 0\n";
  auto everyRunReadable = [&](const std::string& when) {
    for (const auto& id : ids) {
      Outcome log = cli({"log", id, "--json"}, "b");
      ASSERT_EQ(0, log.exitCode) << id << " was lost " << when << ": " << log.err;
      EXPECT_NE(log.out.find("EXECUTION_COMPLETED"), std::string::npos) << id << " " << when;
    }
  };
  for (int delayMs : {5, 20, 35, 50, 70, 100}) {
    Child killed({"--home", home("a"), "retention", "run", "--config", retention}, dir_, env_);
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    killed.kill(SIGKILL);
    killed.wait();
    ASSERT_NO_FATAL_FAILURE(everyRunReadable("after a kill at " + std::to_string(delayMs) + " ms"));
  }
  Outcome finished = cli({"retention", "run", "--config", retention, "--json"}, "a");
  ASSERT_EQ(0, finished.exitCode) << finished.err;
  Outcome live = cli({"ls", "--json"}, "b");
  ASSERT_EQ(0, live.exitCode) << live.err;
  json::value listed = live.json();
  for (const auto& run : listed.as_array()) {
    EXPECT_EQ(run.at("archived"), true) << "the live logs are gone: " << live.out;
  }
  ASSERT_NO_FATAL_FAILURE(everyRunReadable("after the run that finished"));
  std::filesystem::path staging =
      std::filesystem::path(home("a")) / "archive" / ("." + schema_ + ".staging");
  if (std::filesystem::exists(staging)) {
    EXPECT_TRUE(std::filesystem::is_empty(staging)) << "a temp segment was left in " << staging;
  }
}

// The output of `command` run by the shell (stderr too) and its exit status.
std::pair<int, std::string> shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  for (char buf[512]; std::fgets(buf, sizeof buf, p) != nullptr;) out += buf;
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// The home record keeps one key origin per machine on a shared schema: a key file path is
// local, so a machine never reads another's. Machine b runs under its own host name (a UTS
// namespace: root only).
TEST_F(PostgresCli, EachMachineRecordsItsOwnKeyFileAndNeverReadsAnothers) {
  if (shell("unshare --uts true").first != 0) GTEST_SKIP() << "unshare --uts needs root";
  const std::string key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  auto app = [&](const std::string& machine) {
    return keyedApp(machine, key, "\n[compliance.erase]\n");
  };
  auto [appA, keyA] = app("a");
  auto [appB, keyB] = app("b");
  Outcome ranA = cli({"run", appA, "--id", "ka", "--subject", "alice", "--json"}, "a");
  ASSERT_EQ(0, ranA.exitCode) << ranA.err;
  std::string envs = "LOOM_DATABASE_URL='" + url_ + "' LOOM_DATABASE_SCHEMA='" + schema_ + "'";
  auto [bExit, bOut] =
      shell("env " + envs +
            " unshare --uts sh -c 'hostname loom-test-machine-b && exec \"$0\" "
            "\"$@\"' " +
            loomBinary() + " --home " + home("b") + " run " + appB + " --id kb --subject bob");
  ASSERT_EQ(0, bExit) << bOut;
  std::filesystem::remove(keyB);  // machine b's file is not on machine a

  // Machine a, no --config: the record gives its own key file, not machine b's.
  Outcome log = cli({"log", "ka"}, "a");
  ASSERT_EQ(0, log.exitCode) << log.err;
  EXPECT_NE(log.out.find("hello from a"), std::string::npos) << "unsealed with a's key";
  auto [psqlExit, rows] = shell("psql '" + url_ + "' -Atc \"SELECT key || ' ' || value FROM " +
                                schema_ + ".meta WHERE key LIKE 'home.keys%' ORDER BY key\"");
  ASSERT_EQ(0, psqlExit) << rows;
  EXPECT_NE(rows.find("home.keys@loom-test-machine-b {\"file\":\"" + keyB), std::string::npos)
      << rows;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_NE(rows.find("home.keys@" + std::string(host) + " {\"file\":\"" + keyA), std::string::npos)
      << rows;
  // Machine c never booted with keys: it reads no sealed data, and it starts no run that
  // would write unsealed, each saying what to pass.
  auto onC = [&](const std::string& args) {
    return shell("env " + envs +
                 " unshare --uts sh -c 'hostname loom-test-machine-c && exec \"$0\" \"$@\"' " +
                 loomBinary() + " --home " + home("c") + " " + args);
  };
  auto [logExit, logOut] = onC("log ka");
  EXPECT_EQ(1, logExit) << logOut;
  EXPECT_NE(logOut.find("pass --config FILE with the [security.keys]"), std::string::npos)
      << logOut;
  auto [runExit, runOut] =
      onC("run example.steps --id kc --subject carol --input '" + stepsInput(1, 0) + "'");
  EXPECT_EQ(1, runExit) << runOut;
  EXPECT_NE(runOut.find("('loom-test-machine-c') has not recorded where it reads it"),
            std::string::npos)
      << runOut;
  std::string shared = rows.substr(rows.find("home.keys {"));
  shared = shared.substr(0, shared.find('\n'));
  EXPECT_EQ(shared, "home.keys {\"erase\":true,\"crypto\":false}") << "no machine's path";
}

// The maintenance lock lost while a sweep deletes (its connection cut: a server restart, a
// network cut): the sweep finds out at its next check, within 64 deletes, and stops (exit 1)
// instead of going on beside the next holder; a second sweep finishes the work. A row lock
// held by a second session pauses the sweep at its first delete, so the cut lands mid-run.
TEST_F(PostgresCli, ASweepWhoseMaintenanceLockIsLostStopsWithinSixtyFourDeletes) {
  ASSERT_NO_FATAL_FAILURE(runAliceAndBob());  // records the schema's content store
  std::string psql = "psql '" + url_ + "' -Atc ";
  auto query = [&](const std::string& sql) {
    auto [exit, out] = shell(psql + "\"" + sql + "\"");
    EXPECT_EQ(exit, 0) << sql << ": " << out;
    return out;
  };
  const int kUncited = 200;
  query("INSERT INTO " + schema_ + ".blobs SELECT encode(sha256(('uncited ' || i)::bytea), " +
        "'hex'), ('uncited ' || i)::bytea, 10, 0 FROM generate_series(1, " +
        std::to_string(kUncited) + ") i");
  auto uncitedLeft = [&] {
    return std::stoi(query("SELECT count(*) FROM " + schema_ + ".blobs WHERE touched_at = 0"));
  };
  ASSERT_EQ(uncitedLeft(), kUncited);
  // The blocker: every uncited row locked until it is terminated.
  std::string blocker = "PGAPPNAME=loom-test-blocker " + psql + "\"BEGIN; SELECT address FROM " +
                        schema_ + ".blobs WHERE touched_at = 0 FOR UPDATE; " +
                        "SELECT pg_sleep(120); COMMIT\" >/dev/null 2>&1 &";
  ASSERT_EQ(std::system(blocker.c_str()), 0);
  auto waitFor = [&](const std::string& sql) {
    for (int i = 0; i < 600; ++i) {  // 30 s
      if (query(sql).find('t') == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  ASSERT_TRUE(waitFor("SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = "
                      "'loom-test-blocker' AND query LIKE '%pg_sleep%' AND state = 'active'"));

  std::vector<std::string> env = env_;
  env.insert(env.end(), masterKey_.begin(), masterKey_.end());  // it reads the sealed runs
  Child sweep({"--home", home("c"), "sweep", "--grace-hours", "0"}, dir_, env);
  bool waiting = waitFor(
      "SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
      "query LIKE 'DELETE FROM blobs%'");
  std::string held = "FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = "
                     "(hashtext('loom " + schema_ + " maintenance')::bigint & 4294967295)::oid";
  query("SELECT pg_terminate_backend(pid) " + held);
  query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
        "'loom-test-blocker'");
  Outcome stopped = sweep.wait();
  ASSERT_TRUE(waiting) << "the sweep never reached its deletes: " << stopped.out << stopped.err;
  EXPECT_EQ(stopped.exitCode, 1) << stopped.out;
  EXPECT_NE(stopped.err.find("the maintenance lock of `loom sweep`"), std::string::npos)
      << stopped.err;
  EXPECT_NE(stopped.err.find("was lost"), std::string::npos) << stopped.err;
  int left = uncitedLeft();
  EXPECT_GE(left, kUncited - 64) << "it went on deleting without its lock";
  EXPECT_LT(left, kUncited) << "the first delete waited for the row, then ran";

  Outcome again = cli({"sweep", "--grace-hours", "0", "--json"}, "c", masterKey_);
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(uncitedLeft(), 0) << "a second sweep finishes the work";
}

// A second home pointed at the schema with its own master key is refused by the key check,
// and the refusal changes no row: the machines of the first home go on reading with their key.
TEST_F(PostgresCli, AnotherHomesMasterKeyIsRefusedAndChangesNoRow) {
  std::string first = keyedApp("first", std::string(64, 'a')).first;
  std::string second = keyedApp("second", std::string(64, 'b')).first;
  ASSERT_EQ(0, cli({"run", first, "--id", "ka", "--subject", "alice"}, "a").exitCode);
  auto rows = [&] {
    return shell("psql '" + url_ + "' -Atc \"SELECT key || ' ' || value FROM " + schema_ +
                 ".meta WHERE key LIKE 'home.keys%' ORDER BY key\"");
  };
  auto before = rows();
  ASSERT_EQ(0, before.first) << before.second;

  Outcome refused = cli({"run", second, "--id", "kb", "--subject", "bob"}, "b");
  EXPECT_EQ(1, refused.exitCode) << refused.out;
  EXPECT_NE(refused.err.find("does not open this key store"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("its own storage.schema"), std::string::npos) << refused.err;
  EXPECT_EQ(rows().second, before.second) << "a refused boot rewrote the home record";
  Outcome log = cli({"log", "ka"}, "a");  // no --config: the record still names the first key
  ASSERT_EQ(0, log.exitCode) << log.err;
  EXPECT_NE(log.out.find("hello from first"), std::string::npos) << log.out;
  Outcome listed = cli({"ls", "--json"}, "a");
  ASSERT_EQ(0, listed.exitCode) << listed.err;
  EXPECT_EQ(listed.json().as_array().size(), 1u) << "the refused home started no run";
}

// `loom migrate-home`: an embedded home with sealed, erased, offloaded, parked and orphaned
// runs and a kill switch stop moves to the schema, and every run goes on there.
TEST_F(PostgresCli, MigrateHomeMovesAnEmbeddedHomeAndItsRunsGoOnOnTheServer) {
  std::vector<std::string> embedded = {
      "LOOM_DATABASE_URL=",
      "LOOM_MASTER_KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"};
  auto local = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home("old")});
    Outcome o = runLoom(args, dir_, embedded);
    outputs_.push_back(o.out + o.err);
    return o;
  };
  for (auto [id, subject] : {std::pair{"e1", "alice"}, std::pair{"e2", "bob"}}) {
    ASSERT_EQ(
        0,
        local({"run", kExamples + "compliance.toml", "--id", id, "--subject", subject}).exitCode);
  }
  Outcome parked = local({"run", kExamples + "claim-check.toml", "--id", "c1", "--json"});
  ASSERT_EQ(parked.json().at("status"), "parked") << parked.out << parked.err;
  ASSERT_EQ(0, local({"erase", "alice"}).exitCode);
  ASSERT_EQ(0, local({"kill", "nosuch", "--force"}).exitCode);

  // A run in progress holds the home: refused, naming it; once its process is gone, copied.
  Child running(
      {"--home", home("old"), "run", "example.steps", "--id", "k1", "--input", stepsInput(40, 30)},
      dir_, embedded);
  while (readLines(witness()).size() < 3) {
    ASSERT_FALSE(running.exited()) << "the run ended before the copy";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::vector<std::string> copy = {"migrate-home", "--to", url_, "--schema", schema_, "--json"};
  Outcome refused = local(copy);
  EXPECT_EQ(1, refused.exitCode);
  EXPECT_NE(refused.error().find("execution 'k1' is running"), std::string::npos) << refused.out;
  running.kill(SIGKILL);
  running.wait();
  std::size_t linesAtKill = readLines(witness()).size();

  Outcome copied = local(copy);
  ASSERT_EQ(0, copied.exitCode) << copied.err;
  json::value report = copied.json();
  EXPECT_EQ(report.at("executions"), 4);
  EXPECT_EQ(report.at("alreadyThere"), 0);
  EXPECT_GE(report.at("blobs").to_number<int64_t>(), 200) << "claim-check offloaded its pages";
  EXPECT_EQ(report.at("keys"), 2) << "bob's key and alice's tombstone";
  Outcome again = local(copy);  // a second try verifies what is there
  ASSERT_EQ(0, again.exitCode) << again.err;
  EXPECT_EQ(again.json().at("alreadyThere"), 4);

  std::vector<std::string> key = {embedded[1]};
  Outcome listed = cli({"ls", "--json"}, "b", key);  // with the key: alice's run reads erased
  ASSERT_EQ(0, listed.exitCode) << listed.err;
  std::map<std::string, std::string> status;
  json::value executions = listed.json();
  for (const auto& e : executions.as_array()) {
    const auto* erased = e.as_object().if_contains("erased");
    status[std::string(e.at("id").as_string())] =
        erased != nullptr && *erased == true ? "erased" : std::string(e.at("status").as_string());
  }
  EXPECT_EQ(status,
            (std::map<std::string, std::string>{
                {"c1", "parked"}, {"e1", "erased"}, {"e2", "completed"}, {"k1", "orphaned"}}));
  Outcome bob = cli({"log", "e2"}, "b", key);
  EXPECT_NE(bob.out.find("Read the first pages"), std::string::npos) << bob.err;
  Outcome stops = cli({"killed"}, "b");
  EXPECT_NE(stops.out.find("nosuch"), std::string::npos) << stops.out;
  Outcome approved =
      cli({"signal", "c1", "approve:claim-check#turn:201:tool:0", "{\"approved\":true}", "--json"},
          "b", key);
  ASSERT_EQ(0, approved.exitCode) << approved.err;
  EXPECT_EQ(approved.json().at("status"), "completed");
  EXPECT_EQ(approved.json().at("replayContentStoreCalls"), 0);
  Outcome resumed = cli({"resume", "k1", "--json"}, "b", key);
  ASSERT_EQ(0, resumed.exitCode) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "completed");
  EXPECT_GE(resumed.json().at("replayedSteps").to_number<int64_t>() + 1,
            static_cast<int64_t>(linesAtKill))
      << "the steps recorded at home are replayed on the server, not run again";

  // A home with archive segments: they move too, byte for byte, and the server reads them.
  std::string retention = dir_ / "retention.toml";
  std::ofstream(retention) << "[storage.retention]\nafterDays = 0\n";
  ASSERT_EQ(0, runLoom({"--home", home("archived"), "run", "example.steps", "--id", "a1", "--input",
                        "{\"steps\":1}"},
                       dir_, embedded)
                   .exitCode);
  ASSERT_EQ(0, runLoom({"--home", home("archived"), "retention", "run", "--config", retention},
                       dir_, embedded)
                   .exitCode);
  std::string archivedSchema = schema_ + "_archived";
  ASSERT_EQ(0, cli({"db", "migrate", "--schema", archivedSchema}).exitCode);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second verifies what is there
    Outcome archived = runLoom({"--home", home("archived"), "migrate-home", "--to", url_,
                                "--schema", archivedSchema, "--json"},
                               dir_, embedded);
    outputs_.push_back(archived.out + archived.err);
    ASSERT_EQ(0, archived.exitCode) << archived.err;
    EXPECT_EQ(archived.json().at("archiveSegments"), 1) << archived.out;
    EXPECT_GT(archived.json().at("archiveBytes").to_number<int64_t>(), 0);
  }
  Outcome archivedLog =
      runLoom({"--home", home("b"), "log", "a1", "--json"}, dir_,
              {"LOOM_DATABASE_URL=" + url_, "LOOM_DATABASE_SCHEMA=" + archivedSchema});
  outputs_.push_back(archivedLog.out + archivedLog.err);
  ASSERT_EQ(0, archivedLog.exitCode) << archivedLog.err;
  EXPECT_NE(archivedLog.out.find("EXECUTION_COMPLETED"), std::string::npos) << archivedLog.out;
  // A schema holding a segment the home does not is another deployment's: refused up front.
  Outcome foreignSegment = local({"migrate-home", "--to", url_, "--schema", archivedSchema});
  EXPECT_EQ(1, foreignSegment.exitCode);
  EXPECT_NE(foreignSegment.err.find("the schema holds archive segment"), std::string::npos)
      << foreignSegment.err;

  // A schema never migrated, and one holding runs the home does not, are refused.
  std::string otherSchema = schema_ + "_other";
  Outcome unmigrated = local({"migrate-home", "--to", url_, "--schema", otherSchema});
  EXPECT_EQ(1, unmigrated.exitCode);
  EXPECT_NE(unmigrated.err.find("loom db migrate"), std::string::npos) << unmigrated.err;
  std::vector<std::string> other = {"LOOM_DATABASE_URL=" + url_,
                                    "LOOM_DATABASE_SCHEMA=" + otherSchema};
  ASSERT_EQ(0, runLoom({"--home", home("x"), "db", "migrate"}, dir_, other).exitCode);
  ASSERT_EQ(0, runLoom({"--home", home("x"), "run", "example.steps", "--id", "theirs", "--input",
                        "{\"steps\":1}"},
                       dir_, other)
                   .exitCode);
  Outcome foreign = local({"migrate-home", "--to", url_, "--schema", otherSchema});
  EXPECT_EQ(1, foreign.exitCode);
  EXPECT_NE(foreign.err.find("holds execution 'theirs', which the home does not"),
            std::string::npos)
      << foreign.err;
}

}  // namespace
}  // namespace loom::testing
