// A log changed outside Loom is refused, never replayed as truth: a
// deleted row, a forged second STEP_COMPLETED, a metadata row behind its log and a flipped
// byte are each a corruption error naming execution and seq on every read path, and rows
// written before rows had a checksum stay readable.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

class LogCorruption : public ::testing::Test {
 protected:
  Outcome loom(std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home_});
    return runLoom(args, dir_);
  }
  void sql(const std::string& statements) {
    ASSERT_EQ(std::system(("sqlite3 " + home_ + "/loom.db \"" + statements + "\"").c_str()), 0)
        << statements;
  }
  // The output of one query.
  std::string query(const std::string& statement) {
    std::string out = dir_ / "query.txt";
    EXPECT_EQ(std::system(("sqlite3 " + home_ + "/loom.db \"" + statement + "\" > " + out).c_str()),
              0);
    return fileText(out);
  }
  void run(const std::string& id, int steps = 3) {
    Outcome o = loom({"run", "example.steps", "--id", id, "--input",
                      R"({"steps": )" + std::to_string(steps) + "}"});
    ASSERT_EQ(o.exitCode, 0) << o.err;
  }
  // A run parked on a signal: a resume reads the snapshot written at the park, then the log
  // after it.
  void park(const std::string& id) {
    Outcome o = loom({"run", "example.approval", "--id", id});
    ASSERT_EQ(o.exitCode, 0) << o.err;
  }
  // Every way an operator reads one run fails naming the row; the rest of the home reads.
  // `resumeReadsIt` false: the row lies before the run's snapshot, which a resume reads instead
  // of it (docs/spec/snapshots.md).
  void expectRefusedEverywhere(const std::string& id, int seq, const std::string& what,
                               bool resumeReadsIt = true) {
    std::string where = "corrupt event in execution '" + id + "' at seq " + std::to_string(seq);
    std::vector<std::vector<std::string>> commands{{"state", id}, {"log", id}};
    if (resumeReadsIt) commands.push_back({"resume", id});
    for (const auto& command : commands) {
      Outcome o = loom(command);
      EXPECT_EQ(o.exitCode, 1) << command[0] << ": " << o.out;
      EXPECT_NE(o.err.find(where), std::string::npos) << command[0] << ": " << o.err;
      EXPECT_NE(o.err.find(what), std::string::npos) << command[0] << ": " << o.err;
    }
    Outcome sweep = loom({"sweep", "--grace-hours", "0"});
    EXPECT_EQ(sweep.exitCode, 1);
    EXPECT_NE(sweep.err.find(id), std::string::npos) << sweep.err;
    EXPECT_NE(sweep.err.find("nothing was deleted"), std::string::npos) << sweep.err;
    Outcome others = loom({"state", "intact"});
    EXPECT_EQ(others.exitCode, 0) << others.err;
    EXPECT_EQ(loom({"ls"}).exitCode, 0);
  }
  void SetUp() override { run("intact"); }

  TempDir dir_;
  std::string home_ = dir_ / "home";
};

TEST_F(LogCorruption, ADeletedRowIsAGapThatResumeRefusesInsteadOfRunningTheStepAgain) {
  std::string witness = dir_ / "witness.txt";
  Child child({"--home", home_, "run", "example.steps", "--id", "gap", "--input",
               R"({"steps": 4, "sleepMs": 300, "witness": ")" + witness + "\"}"},
              dir_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (readLines(witness).size() < 2) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  child.kill(SIGKILL);
  child.wait();
  std::size_t ran = readLines(witness).size();
  sql("DELETE FROM events WHERE execution_id = 'gap' AND seq = 2");
  expectRefusedEverywhere("gap", 2, "the row is missing");
  EXPECT_EQ(readLines(witness).size(), ran) << "a step recorded before the gap ran again";
}

// An ended run's resume prints its recorded result: it reads the whole log to do so, and
// refuses a corrupt row as `log` and `state` do, instead of exiting 0 over it.
TEST_F(LogCorruption, AResumeOfAnEndedRunRefusesACorruptRowAsLogAndStateDo) {
  run("ended");
  sql("UPDATE events SET body = replace(body, 'STEP_COMPLETED', 'STEP_COMPLETED ') "
      "WHERE execution_id = 'ended' AND seq = 3");
  expectRefusedEverywhere("ended", 3, "checksum does not match");
}

TEST_F(LogCorruption, AMissingLastRowIsAGapToo) {
  run("tail");
  sql("DELETE FROM events WHERE execution_id = 'tail' AND seq = 5");
  expectRefusedEverywhere("tail", 5, "its log runs to seq 5");
}

TEST_F(LogCorruption, ASecondStepCompletedForOneStepIsRefusedInsteadOfWinning) {
  park("dup");
  // A forged completion of "request" with another value, appended with its metadata kept in
  // step and no checksum, as a row written before rows had one.
  sql("INSERT INTO events (execution_id, seq, body) SELECT execution_id, 4, "
      "replace(replace(body, '\\\"seq\\\":2', '\\\"seq\\\":4'), 'true', 'false') "
      "FROM events WHERE execution_id = 'dup' AND seq = 2; "
      "UPDATE executions SET next_seq = 5 WHERE id = 'dup'");
  expectRefusedEverywhere("dup", 4, "step 'request' already completed");
}

TEST_F(LogCorruption, AMetadataRowBehindItsLogIsCorruptionNotAnotherRunner) {
  run("behind");
  sql("UPDATE executions SET next_seq = 3 WHERE id = 'behind'");
  expectRefusedEverywhere("behind", 3, "next seq is 3, behind its log");
}

TEST_F(LogCorruption, AFlippedByteInsideAValueFailsItsChecksum) {
  park("flip");
  sql("UPDATE events SET body = replace(body, 'true', 'fals') "
      "WHERE execution_id = 'flip' AND seq = 2");
  expectRefusedEverywhere("flip", 2, "checksum does not match", /*resumeReadsIt=*/false);
  // The resume reads the park's snapshot, not seq 2, and parks again on what Loom wrote.
  Outcome fromSnapshot = loom({"resume", "flip"});
  EXPECT_EQ(fromSnapshot.exitCode, 0) << fromSnapshot.err;
  EXPECT_NE(fromSnapshot.out.find("parked"), std::string::npos) << fromSnapshot.out;
  // Without the snapshot it reads the whole log, and refuses at the changed row.
  sql("DELETE FROM snapshots WHERE execution_id = 'flip'");
  Outcome fromLog = loom({"resume", "flip"});
  EXPECT_EQ(fromLog.exitCode, 1);
  EXPECT_NE(fromLog.err.find("corrupt event in execution 'flip' at seq 2"), std::string::npos)
      << fromLog.err;
  EXPECT_NE(fromLog.err.find("checksum does not match"), std::string::npos) << fromLog.err;
}

TEST_F(LogCorruption, RowsWrittenBeforeChecksumsStayReadableAndNewRowsGetOne) {
  run("old");
  Outcome before = loom({"state", "old", "--json"});
  ASSERT_EQ(before.exitCode, 0) << before.err;
  // A database from before the checksum column: the column is gone, every row lacks one.
  sql("ALTER TABLE events DROP COLUMN checksum; ALTER TABLE control DROP COLUMN checksum");
  Outcome after = loom({"state", "old", "--json"});
  ASSERT_EQ(after.exitCode, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  run("new");
  EXPECT_EQ(loom({"log", "new"}).exitCode, 0);
  EXPECT_EQ(query("SELECT count(*) FROM events WHERE checksum IS NULL AND execution_id = 'new'"),
            "0\n")
      << "a new row was written without a checksum";
}

}  // namespace
}  // namespace loom::testing
