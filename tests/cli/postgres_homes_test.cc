// `loom` on PostgreSQL: what separates the homes and machines of one schema (each machine's
// key origin, another home's master key refused without a trace) and what keeps maintenance
// alone on it (a lost maintenance lock stops the sweep).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "postgres_cli_fixture.h"

namespace loom::testing {
namespace {

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
  ASSERT_TRUE(
      waitFor("SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = "
              "'loom-test-blocker' AND query LIKE '%pg_sleep%' AND state = 'active'"));

  std::vector<std::string> env = env_;
  env.insert(env.end(), masterKey_.begin(), masterKey_.end());  // it reads the sealed runs
  Child sweep({"--home", home("c"), "sweep", "--grace-hours", "0"}, dir_, env);
  bool waiting = waitFor(
      "SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
      "query LIKE 'DELETE FROM blobs%'");
  std::string held =
      "FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = "
      "(hashtext('loom " +
      schema_ + " maintenance')::bigint & 4294967295)::oid";
  query("SELECT pg_terminate_backend(pid) " + held);
  query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
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

}  // namespace
}  // namespace loom::testing
