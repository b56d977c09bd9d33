// Tests only the PostgreSQL EventStore needs beyond the conformance suite: the schema's
// versions (`loom db migrate`), an unreachable server, a connection the server drops, and rows
// changed behind Loom's back. Each test has a schema of its own on the test cluster.
#include "loom/postgres/postgres_event_store.h"

#include <gmock/gmock.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "event_store_conformance.h"
#include "kernel/append_plan.h"
#include "loom/postgres/postgres_admin.h"
#include "loom/postgres/postgres_blob_ledger.h"
#include "loom/postgres/postgres_content_store.h"
#include "loom/postgres/postgres_kill_switch.h"
#include "loom/postgres/postgres_snapshot_store.h"
#include "loom/util/error.h"
#include "postgres/pg_append_group.h"
#include "postgres/pg_connection.h"
#include "postgres/pg_pool.h"
#include "postgres_store_test_support.h"
#include "support/postgres_server.h"

namespace loom::kernel::conformance {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The round trips `call` makes to the server (statements sent).
int64_t roundTripsOf(const std::function<void()>& call) {
  int64_t before = postgres::roundTrips();
  call();
  return postgres::roundTrips() - before;
}

class PostgresEventStoreTest : public PostgresStoreTest {
 protected:
  // A connection of the test's own, in the store's schema, for what Loom would never do.
  postgres::Connection admin() const {
    return postgres::Connection(options().url, options().schema);
  }
  // Terminates every backend of `application` and waits until they are gone.
  void dropConnections(const std::string& application) const {
    auto conn = admin();
    conn.execDynamic(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        {postgres::Param::text(application)}, "test");
    for (int i = 0; i < 500; ++i) {
      auto left = conn.execDynamic("SELECT 1 FROM pg_stat_activity WHERE application_name = $1",
                                   {postgres::Param::text(application)}, "test");
      if (left.rows() == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "the backends of " << application << " did not end";
  }
};

TEST_F(PostgresEventStoreTest, AnUnmigratedSchemaIsRefusedNamingTheMigration) {
  try {
    postgres::PostgresEventStore store(options());
    FAIL() << "a store opened a schema with no tables";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("loom db migrate"));
  }
  postgres::migrate(options());
  postgres::migrate(options());  // idempotent
  postgres::PostgresEventStore store(options());
  EXPECT_EQ(2, store.append("e1", 1, {started()}));
}

TEST_F(PostgresEventStoreTest, ASchemaOfANewerLoomIsRefusedByTheStoreAndTheMigration) {
  postgres::migrate(options());
  admin().run("UPDATE meta SET value = '99' WHERE key = 'schema_version'", "test");
  EXPECT_THROW(postgres::PostgresEventStore{options()}, FailedPreconditionError);
  try {
    postgres::migrate(options());
    FAIL() << "a migration downgraded a newer schema";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("upgrade Loom"));
  }
}

// A schema of version 1 (before the blob ledger's address index) is refused until migrated;
// the migration adds the index and keeps every row.
TEST_F(PostgresEventStoreTest, AVersion1SchemaIsRefusedUntilTheMigrationAddsTheLedgerIndex) {
  postgres::migrate(options());
  {
    postgres::PostgresEventStore store(options());
    store.append("kept", 1, {kernel::executionStarted("wf", nullptr, std::nullopt, 1)});
  }
  auto conn = admin();
  conn.run("DROP INDEX subject_blobs_by_address", "test");
  conn.run("UPDATE meta SET value = '1' WHERE key = 'schema_version'", "test");
  try {
    postgres::PostgresEventStore store(options());
    FAIL() << "a store opened a schema of an older version";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("migrat"));
  }
  postgres::migrate(options());
  postgres::PostgresEventStore store(options());
  EXPECT_TRUE(store.info("kept"));
  auto index = conn.exec(
      "SELECT 1 FROM pg_indexes WHERE indexname = 'subject_blobs_by_address' "
      "AND schemaname = current_schema()",
      {}, "test");
  EXPECT_EQ(index.rows(), 1);
}

TEST_F(PostgresEventStoreTest, AnUnreachableServerIsUnavailableAndNoMessageHoldsThePassword) {
  postgres::PostgresOptions o = options();
  o.url = "postgresql://loom:s3cret-pw@127.0.0.1:1/postgres";
  try {
    postgres::PostgresEventStore store(o);
    FAIL() << "connected to nothing";
  } catch (const UnavailableError& e) {
    EXPECT_THAT(e.what(), Not(HasSubstr("s3cret-pw")));
    EXPECT_THAT(e.what(), HasSubstr("postgresql://loom:***@127.0.0.1:1/postgres"));
  }
  EXPECT_EQ("host=h password=*** user=u", postgres::redactUrl("host=h password=pw user=u"));
  EXPECT_EQ("host=h password = *** user=u", postgres::redactUrl("host=h password = pw user=u"));
  EXPECT_EQ("host=h password=*** user=u", postgres::redactUrl("host=h password='a b' user=u"));
  // A password written with a raw '@' or '/' (not percent-encoded) is hidden whole.
  EXPECT_THAT(postgres::redactUrl("postgresql://u:pa@ss@h/db"), Not(HasSubstr("ss@")));
  EXPECT_THAT(postgres::redactUrl("postgresql://u:pa@ss@h/db"), HasSubstr(":***@h/db"));
  EXPECT_EQ("postgresql://u:***@h/db", postgres::redactUrl("postgresql://u:pa/ss@h/db"));
  EXPECT_EQ("postgresql://u:***@h/db?application_name=a@b",
            postgres::redactUrl("postgresql://u:pw@h/db?application_name=a@b"));
  EXPECT_EQ("postgresql://u:***@h/db?password=***",
            postgres::redactUrl("postgresql://u:pw@h/db?password=pw2"));
}

// The server drops the store's idle connections (a restart, a failover, an administrator):
// the next calls find them gone at their BEGIN or first read, when nothing was sent, and run
// on new connections; nothing recorded is lost.
TEST_F(PostgresEventStoreTest, ConnectionsTheServerDroppedAreReplacedAndNothingIsLost) {
  postgres::migrate(options());
  postgres::PostgresOptions o = options();
  o.url += "?application_name=" + o.schema;  // so only this store's connections are dropped
  postgres::PostgresEventStore store(o);
  EXPECT_EQ(2, store.append("e1", 1, {started()}));
  dropConnections(o.schema);
  EXPECT_EQ(3, store.append("e1", 2, {step("s1")}));  // one statement, on a new connection
  EXPECT_EQ(2u, store.read("e1").size());
  dropConnections(o.schema);
  EXPECT_EQ(5, store.append("e1", 3, {step("s2"), step("s3")}));  // a transaction
  dropConnections(o.schema);
  EXPECT_EQ(5, store.info("e1")->nextSeq);
  EXPECT_EQ(4u, store.read("e1").size());
  // A server that is gone for good is an UnavailableError, not an empty answer.
  postgres::PostgresOptions gone = o;
  gone.url = "postgresql://loom@127.0.0.1:1/postgres";
  EXPECT_THROW(postgres::PostgresEventStore{gone}, UnavailableError);
}

// A second store stands for another process (a `loom signal` beside the runner): the runner's
// one-statement append, planned from what it last wrote, must match nothing and fall back, so a
// stale writer gets a ConflictError that wrote nothing, and the next append plans afresh.
TEST_F(PostgresEventStoreTest, AnAppendByAnotherProcessSendsTheRunnerBackToTheTransaction) {
  postgres::migrate(options());
  postgres::PostgresEventStore runner(options());
  postgres::PostgresEventStore other(options());
  EXPECT_EQ(2, runner.append("e1", 1, {started()}));
  EXPECT_EQ(3, runner.append("e1", 2, {step("s1")}));  // one statement: planned from seq 3
  EXPECT_EQ(4, other.append("e1", 3, {signalReceived("go", json::value(1), kT0)}));
  EXPECT_THROW(runner.append("e1", 3, {step("s2")}), ConflictError);
  EXPECT_EQ(4, runner.info("e1")->nextSeq) << "a refused append wrote something";
  EXPECT_EQ(5, runner.append("e1", 4, {step("s2")}));
  EXPECT_EQ(6, runner.append("e1", 5, {step("s3")}));
  auto info = runner.info("e1");
  EXPECT_EQ(6, info->nextSeq);
  EXPECT_EQ(3, info->steps);
  EXPECT_EQ(5u, runner.read("e1").size());  // every row there, the reading rules hold
  // An id the server cannot hold as text is a typed refusal, not a lost append.
  EXPECT_THROW(runner.append(std::string("bad\xff", 4), 1, {started()}), InvalidArgumentError);
}

// LISTEN/NOTIFY: a worker waiting on one store hears a submission and a released lease made
// through another (another machine), long before its poll would; with no news (steps,
// heartbeats, a leased start, an ended run's release) it times out; a listener the server
// dropped is opened again.
TEST_F(PostgresEventStoreTest, AWaitingWorkerHearsSubmissionsAndReleasesFromOtherStores) {
  postgres::migrate(options());
  postgres::PostgresOptions o = options();
  o.url += "?application_name=" + o.schema;
  postgres::PostgresEventStore worker(o);
  postgres::PostgresEventStore other(options());
  auto heardWithin = [&](const std::function<void()>& news) {
    EXPECT_FALSE(worker.awaitWork(0)) << "news nobody sent";
    std::atomic<bool> heard{false};
    auto t0 = std::chrono::steady_clock::now();
    std::thread waiting([&] { heard = worker.awaitWork(20'000); });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // it is listening
    news();
    waiting.join();
    EXPECT_TRUE(heard.load());
    return std::chrono::steady_clock::now() - t0;
  };
  EXPECT_LT(heardWithin([&] { other.append("e1", 1, {started()}); }), std::chrono::seconds(10));
  LeaseRequest request{"e1", LeaseOwner{"r", "h", 1, "b", "ns", 1}, 10'000, std::nullopt};
  Lease lease = other.acquireLease(request);
  EXPECT_LT(heardWithin([&] { other.releaseLease(lease); }), std::chrono::seconds(10));

  Lease again = other.acquireLease(request);
  other.appendLeased(again, 2, {step("s1")});
  other.renewLease(again, 10'000);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(worker.awaitWork(300)) << "steps and heartbeats are not news";
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
  // A run started under its runner's lease, and the release of a run that ended, need no
  // worker: not news (a NOTIFY serializes the server's committing notifiers).
  Lease fresh = other.acquireLease({"e3", request.owner, 10'000, std::nullopt});
  other.appendLeased(fresh, 1, {started()});
  other.appendLeased(fresh, 2, {executionCompleted(json::value("done"), kT0)});
  other.releaseLease(fresh);
  EXPECT_FALSE(worker.awaitWork(300)) << "a leased start or an ended run's release woke workers";
  dropConnections(o.schema);
  EXPECT_FALSE(worker.awaitWork(50)) << "a lost listener is not news";
  EXPECT_LT(heardWithin([&] { other.append("e2", 1, {started()}); }), std::chrono::seconds(10));
}

// A statement on a connection the server ended is ConnectionLost: for one that commits on its
// own, the outcome is unknown (pg_pool.h's execCommitting says so).
TEST_F(PostgresEventStoreTest, AStatementOnAConnectionTheServerEndedIsConnectionLost) {
  postgres::migrate(options());
  const std::string application = options().schema + "_lost";
  postgres::Connection conn(options().url + "?application_name=" + application, options().schema);
  static const char* kSql = "SELECT 1";  // prepared before the drop: only its EXECUTE is sent
  conn.exec(kSql, {}, "test");
  dropConnections(application);
  try {
    postgres::execCommitting(conn, kSql, {}, "test");
    FAIL() << "a statement on an ended connection succeeded";
  } catch (const postgres::ConnectionLost&) {
    FAIL() << "execCommitting let ConnectionLost through";
  } catch (const UnavailableError& e) {
    EXPECT_THAT(e.what(), HasSubstr("outcome is unknown"));
  }
  EXPECT_TRUE(conn.broken());
  EXPECT_THROW(conn.exec(kSql, {}, "test"), postgres::ConnectionLost);
  // A statement never prepared there only sent its PREPARE: it never ran, plainly retryable.
  try {
    conn.exec("SELECT 2", {}, "test");
    FAIL() << "a statement on an ended connection succeeded";
  } catch (const postgres::ConnectionLost&) {
    FAIL() << "a PREPARE that never ran was reported as an unknown outcome";
  } catch (const UnavailableError&) {
  }
}

// A run's own statements: its first lease, its leased start and its release are one statement
// each (committed on their own), as each step is.
TEST_F(PostgresEventStoreTest, AFirstLeaseALeasedStartAndAReleaseAreOneStatementEach) {
  postgres::migrate(options());
  postgres::PostgresEventStore store(options());
  for (const char* id : {"warm", "e1"}) {  // the first prepares the statements
    Lease lease;
    int64_t acquire = roundTripsOf([&] {
      lease = store.acquireLease({id, LeaseOwner{"r", "h", 1, "b", "ns", 1}, 10'000, {}});
    });
    int64_t start = roundTripsOf([&] { EXPECT_EQ(2, store.appendLeased(lease, 1, {started()})); });
    int64_t release = roundTripsOf([&] { store.releaseLease(lease); });
    if (std::string(id) == "warm") continue;
    EXPECT_EQ(1, acquire);
    EXPECT_EQ(1, start);
    EXPECT_EQ(1, release);
    auto seen = store.currentLease(id);
    ASSERT_TRUE(seen.has_value());
    EXPECT_TRUE(seen->released);
    EXPECT_EQ(seen->token, 1);
    EXPECT_EQ(seen->expiresAtMillis - seen->acquiredAtMillis, 10'000);
    EXPECT_EQ(lease.acquiredAtMillis, seen->acquiredAtMillis) << "the server's clock, as stored";
    EXPECT_EQ(store.read(id).size(), 1u);
  }
}

// The append that ends a run releases its lease in the same statement (its runner releases it
// next anyway): the release that follows costs no round trip. One that parks it does not (a
// worker must be woken); so does every run ending at once through one group statement.
TEST_F(PostgresEventStoreTest, TheAppendThatEndsARunReleasesItsLeaseInTheSameStatement) {
  postgres::migrate(options());
  postgres::PostgresEventStore store(options());
  auto run = [&](const std::string& id, const Event& last) {
    Lease lease = store.acquireLease({id, LeaseOwner{"r", "h", 1, "b", "ns", 1}, 10'000, {}});
    EXPECT_EQ(2, store.appendLeased(lease, 1, {started()}));
    EXPECT_EQ(3, store.appendLeased(lease, 2, {step("s1", json::value(1))}));
    int64_t end = roundTripsOf([&] { EXPECT_EQ(4, store.appendLeased(lease, 3, {last})); });
    EXPECT_EQ(1, end) << id;
    return lease;
  };
  run("warm", kernel::executionCompleted(json::value(1), kT0));  // prepares the statements
  store.releaseLease(run("warm-parked", kernel::executionParked("signal", "go", "", kT0)));
  Lease done = run("done", kernel::executionCompleted(json::value(1), kT0));
  ASSERT_TRUE(store.currentLease("done").has_value());
  EXPECT_TRUE(store.currentLease("done")->released) << "released with the ending append";
  EXPECT_THROW(store.renewLease(done, 10'000), kernel::LeaseLostError);
  EXPECT_EQ(0, roundTripsOf([&] { store.releaseLease(done); }));

  Lease parked = run("parked", kernel::executionParked("signal", "go", "", kT0));
  EXPECT_FALSE(store.currentLease("parked")->released) << "a parked run keeps it until release";
  EXPECT_EQ(1, roundTripsOf([&] { store.releaseLease(parked); }));
  EXPECT_TRUE(store.currentLease("parked")->released);

  // An ending append that misses (another store appended first) releases nothing.
  Lease current = store.acquireLease({"raced", LeaseOwner{"r", "h", 1, "b", "ns", 1}, 10'000, {}});
  store.appendLeased(current, 1, {started()});
  postgres::PostgresEventStore other(options());
  other.append("raced", 2, {step("s1", json::value(1))});  // behind `store`'s back
  EXPECT_THROW(store.appendLeased(current, 2, {kernel::executionCompleted(json::value(1), kT0)}),
               ConflictError);
  EXPECT_FALSE(store.currentLease("raced")->released) << "released by an append that missed";

  // Sixteen runs ending at once share group statements, half completing (released with their
  // end), half parking (kept): the group's release column is per row.
  std::vector<Lease> leases;
  for (int i = 0; i < 16; ++i) {
    std::string id = "g" + std::to_string(i);
    leases.push_back(store.acquireLease({id, LeaseOwner{"r", "h", 1, "b", "ns", 1}, 10'000, {}}));
    store.appendLeased(leases.back(), 1, {started()});
  }
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < leases.size(); ++i) {
    Event last = i % 2 == 0 ? kernel::executionCompleted(json::value(1), kT0)
                            : kernel::executionParked("signal", "go", "", kT0);
    threads.emplace_back([&, lease = leases[i], last] {
      ++ready;
      while (!go) std::this_thread::yield();  // all at once: they queue for one leader
      store.appendLeased(lease, 2, {last});
    });
  }
  while (ready < static_cast<int>(threads.size())) std::this_thread::yield();
  int64_t ending = roundTripsOf([&] {
    go = true;
    for (auto& t : threads) t.join();
  });
  EXPECT_LT(ending, 16) << "no group statement was sent";
  for (std::size_t i = 0; i < leases.size(); ++i) {
    EXPECT_EQ(store.currentLease(leases[i].executionId)->released, i % 2 == 0)
        << leases[i].executionId;
  }
}

// Every store of a process shares one pool per url and schema: a booted app (six stores) keeps
// one idle connection, not one per store, so workers fit the server's max_connections.
TEST_F(PostgresEventStoreTest, TheStoresOfAProcessShareTheirConnections) {
  postgres::migrate(options());
  postgres::PostgresOptions o = options();
  o.url += "?application_name=" + o.schema + "_share";
  postgres::PostgresEventStore events(o);
  postgres::PostgresSnapshotStore snapshots(o);
  postgres::PostgresContentStore blobs(o);
  postgres::PostgresKillSwitchRows stops(o);
  postgres::PostgresBlobLedgerRows ledger(o);
  events.append("e1", 1, {started()});
  blobs.put("bytes");
  stops.list();
  auto count =
      admin().execDynamic("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                          {postgres::Param::text(o.schema + "_share")}, "test");
  EXPECT_EQ(count.int64(0, 0), 1) << "each store kept a connection of its own";
}

// The server-side search of erasure's owner-set check: the logs holding a wanted address, and
// every log with a sealed payload (its text cannot be searched), and no other.
TEST_F(PostgresEventStoreTest, TheServerNamesTheLogsThatMayCiteAnAddress) {
  postgres::migrate(options());
  postgres::PostgresEventStore store(options());
  const std::string a(64, 'a'), b(64, 'b');
  store.append("cites-a", 1, {started(), step("s1", json::object{{"ref", a}})});
  store.append("cites-b", 1, {started(), step("s1", json::object{{"ref", b}})});
  store.append("quiet", 1, {started(), step("s1", json::value("nothing here"))});
  store.append("sealed", 1, {started()});
  store.append("sealed", 2,
               {Event{0, EventType::kStepCompleted, kT0,
                      json::object{{"sealed", json::object{{"subject", "s"},
                                                           {"keyId", "k"},
                                                           {"nonce", "n"},
                                                           {"ciphertext", "c"}}}}}});
  using Ids = kernel::EventStore::AddressSet;
  EXPECT_EQ(store.executionsThatMayCite({a}), (Ids{"cites-a", "sealed"}));
  EXPECT_EQ(store.executionsThatMayCite({a, b}), (Ids{"cites-a", "cites-b", "sealed"}));
  EXPECT_EQ(store.executionsThatMayCite({std::string(64, 'c')}), (Ids{"sealed"}));
}

TEST_F(PostgresEventStoreTest, ARowChangedBehindLoomsBackIsCorruptNamingItsSeq) {
  postgres::migrate(options());
  postgres::PostgresEventStore store(options());
  store.append("e1", 1, {started(), step("s1"), step("s2")});
  admin().run(
      "UPDATE events SET body = convert_to(replace(convert_from(body, 'UTF8'), "
      "'ok', 'ko'), 'UTF8') WHERE execution_id = 'e1' AND seq = 2",
      "test");
  try {
    store.read("e1");
    FAIL() << "a changed row was read as truth";
  } catch (const CorruptEventError& e) {
    EXPECT_THAT(e.what(), HasSubstr("e1"));
    EXPECT_THAT(e.what(), HasSubstr("2"));
  }
  admin().run("DELETE FROM events WHERE execution_id = 'e1' AND seq = 3", "test");
  EXPECT_THROW(store.scan("e1", 3, [](const Event&) {}), CorruptEventError);
}

// The maintenance lock (`loom sweep`, `loom erase`, `loom retention run` on a shared schema: one
// for all of them) whose connection ends is released by the server; the holder finds out at its
// next check instead of going on beside the next holder.
TEST_F(PostgresEventStoreTest, AMaintenanceLockWhoseConnectionEndsIsKnownLostAtItsNextCheck) {
  postgres::migrate(options());
  postgres::MaintenanceLock first(options(), "sweep");
  first.check();
  EXPECT_THROW(postgres::MaintenanceLock(options(), "sweep"), FailedPreconditionError);
  EXPECT_THROW(postgres::MaintenanceLock(options(), "erase"), FailedPreconditionError);
  // The backend holding this schema's maintenance lock (the key is hashtext of the lock's name).
  const std::string held =
      "FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = "
      "(hashtext($1)::bigint & 4294967295)::oid";
  postgres::Param name = postgres::Param::text("loom " + options().schema + " maintenance");
  auto conn = admin();
  conn.execDynamic("SELECT pg_terminate_backend(pid) " + held, {name}, "test");
  for (int i = 0; i < 500; ++i) {
    if (conn.execDynamic("SELECT 1 " + held, {name}, "test").rows() == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  postgres::MaintenanceLock second(options(), "sweep");  // the server released the first
  second.check();
  try {
    first.check();
    ADD_FAILURE() << "a lost lock passed its check";
  } catch (const UnavailableError& e) {
    EXPECT_THAT(e.what(), HasSubstr("maintenance lock of `loom sweep`"));
    EXPECT_THAT(e.what(), HasSubstr("run it again"));
  }
}

// Group commit on PostgreSQL (pg_append_group.h): single-event appends of several executions
// share one statement; each holds or misses on its own, and an error stays with its append.
class PostgresAppendGroupTest : public PostgresEventStoreTest {
 protected:
  void SetUp() override {
    PostgresEventStoreTest::SetUp();
    if (IsSkipped()) return;
    postgres::migrate(options());
    store_.emplace(options());
    for (const char* id : {"a", "b", "c"}) store_->append(id, 1, {started()});
  }
  // An append of one step to `id`, planned from what the log holds now.
  postgres::OneStatementAppend planned(const std::string& id, const std::string& stepId) {
    known_.push_back(std::make_unique<ExecutionInfo>(*store_->info(id)));
    postgres::OneStatementAppend r;
    r.known = known_.back().get();
    r.plan = planAppend(id, *r.known, r.known->nextSeq, {step(stepId)});
    return r;
  }
  // Runs `group` as the store's leader would; returns the statements it sent.
  int64_t together(std::vector<postgres::OneStatementAppend*> group) {
    int64_t before = postgres::roundTrips();
    groups_.run(group);
    return postgres::roundTrips() - before;
  }
  std::vector<std::string> stepIds(const std::string& id) {
    std::vector<std::string> out;
    for (const Event& e : store_->read(id)) {
      if (e.type == EventType::kStepCompleted)
        out.push_back(e.data.at("stepId").as_string().c_str());
    }
    return out;
  }

  std::optional<postgres::PostgresEventStore> store_;
  postgres::Pool pool_{options().url, options().schema, 2};
  postgres::AppendGroups groups_{pool_};
  std::vector<std::unique_ptr<ExecutionInfo>> known_;
};

TEST_F(PostgresAppendGroupTest, AppendsOfSeveralExecutionsShareOneStatement) {
  auto a = planned("a", "s1"), b = planned("b", "s1"), c = planned("c", "s1");
  EXPECT_LE(together({&a, &b, &c}), 2) << "not one statement (and its PREPARE)";
  for (auto* r : {&a, &b, &c}) {
    EXPECT_TRUE(r->matched);
    EXPECT_FALSE(r->error);
  }
  for (const char* id : {"a", "b", "c"}) {
    EXPECT_THAT(stepIds(id), ::testing::ElementsAre("s1")) << id;
    EXPECT_EQ(3, store_->info(id)->nextSeq) << id;
  }
}

TEST_F(PostgresAppendGroupTest, AStaleOrUnfencedAppendMissesAloneAndWritesNothing) {
  auto a = planned("a", "s1"), b = planned("b", "s1"), c = planned("c", "s1");
  store_->append("b", 2, {signalReceived("go", json::value(1), kT0)});  // another writer
  Lease lease = store_->acquireLease({"c", LeaseOwner{"r", "h", 1, "b", "ns", 1}, 10'000, {}});
  Lease stale = lease;
  stale.token += 1;  // a lease c's log does not have
  c.fence = &stale;
  together({&a, &b, &c});
  EXPECT_TRUE(a.matched);
  EXPECT_FALSE(b.matched);
  EXPECT_FALSE(c.matched);
  EXPECT_FALSE(a.error || b.error || c.error);
  EXPECT_THAT(stepIds("a"), ::testing::ElementsAre("s1"));
  EXPECT_THAT(stepIds("b"), ::testing::IsEmpty());
  EXPECT_THAT(stepIds("c"), ::testing::IsEmpty());
  c.fence = &lease;  // the current lease holds
  c.matched = false;
  together({&c});
  EXPECT_TRUE(c.matched);
  EXPECT_THAT(stepIds("c"), ::testing::ElementsAre("s1"));
}

TEST_F(PostgresAppendGroupTest, TwoAppendsOfOneExecutionGoInTurnAndTheSecondMisses) {
  auto first = planned("a", "s1"), second = planned("a", "s2"), b = planned("b", "s1");
  pool_.acquire();
  int64_t statements = together({&first, &second, &b});
  EXPECT_TRUE(first.matched);
  EXPECT_TRUE(b.matched);
  EXPECT_FALSE(second.matched) << "planned from the row the first one changed";
  EXPECT_GE(statements, 2);
  EXPECT_THAT(stepIds("a"), ::testing::ElementsAre("s1"));
}

TEST_F(PostgresAppendGroupTest, AnErrorStaysWithTheAppendThatCausedIt) {
  auto a = planned("a", "s1"), b = planned("b", "s1"), c = planned("c", "s1");
  // A row at c's next seq written behind Loom's back: c's insert is a unique violation.
  admin().run("INSERT INTO events (execution_id, seq, body, checksum) VALUES ('c', 2, 'x', 0)",
              "test");
  together({&a, &b, &c});
  EXPECT_TRUE(a.matched && b.matched);
  EXPECT_FALSE(a.error || b.error);
  ASSERT_TRUE(c.error);
  EXPECT_THROW(std::rethrow_exception(c.error), ConflictError);
  EXPECT_THAT(stepIds("a"), ::testing::ElementsAre("s1"));
  EXPECT_THAT(stepIds("b"), ::testing::ElementsAre("s1"));
}

// A refusal of the whole statement that one row caused (here its row lock held past the
// connection's lock_timeout) fails only that append: the others are sent again alone and land.
TEST_F(PostgresAppendGroupTest, ALockTimeoutOfOneRowFailsOnlyItsAppend) {
  postgres::Pool impatient{options().url + "?options=-c%20lock_timeout%3D200", options().schema, 2};
  postgres::AppendGroups groups{impatient};
  auto a = planned("a", "s1"), b = planned("b", "s1"), c = planned("c", "s1");
  auto holder = admin();
  holder.run("BEGIN", "test");
  holder.execDynamic("SELECT 1 FROM executions WHERE id = 'c' FOR UPDATE", {}, "test");
  groups.run({&a, &b, &c});
  holder.run("ROLLBACK", "test");
  EXPECT_TRUE(a.matched && b.matched);
  EXPECT_FALSE(a.error || b.error);
  ASSERT_TRUE(c.error);
  EXPECT_THROW(std::rethrow_exception(c.error), UnavailableError);
  EXPECT_THAT(stepIds("a"), ::testing::ElementsAre("s1"));
  EXPECT_THAT(stepIds("c"), ::testing::IsEmpty());
}

// Through the store: runs appending at once share statements, and every log is whole.
TEST_F(PostgresAppendGroupTest, ConcurrentRunsShareStatementsAndLoseNothing) {
  constexpr int kRuns = 16, kSteps = 40;
  for (int r = 0; r < kRuns; ++r) store_->append("r" + std::to_string(r), 1, {started()});
  int64_t before = postgres::roundTrips();
  std::vector<std::thread> runs;
  for (int r = 0; r < kRuns; ++r) {
    runs.emplace_back([&, r] {
      std::string id = "r" + std::to_string(r);
      for (int64_t seq = 2; seq < 2 + kSteps; ++seq) {
        store_->append(id, seq, {step("s" + std::to_string(seq))});
      }
    });
  }
  for (auto& t : runs) t.join();
  int64_t statements = postgres::roundTrips() - before;
  EXPECT_LT(statements, kRuns * kSteps) << "no two appends shared a statement";
  for (int r = 0; r < kRuns; ++r) {
    auto events = store_->read("r" + std::to_string(r));
    EXPECT_EQ(events.size(), static_cast<std::size_t>(1 + kSteps));
    expectContiguous(events);
  }
}

}  // namespace
}  // namespace loom::kernel::conformance
