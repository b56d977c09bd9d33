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

#include "postgres_cli_fixture.h"
#include "support/loom_process.h"
#include "support/postgres_server.h"

namespace loom::testing {
namespace {

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
