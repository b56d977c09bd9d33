// The KeyStore conformance suite: the contract written in include/loom/compliance/key_store.h
// as tests every implementation passes (instantiated at the bottom, one line per
// implementation), then the SQLite store's own promises: reopening with the right master key
// reads the same keys, the wrong one is a ConfigError before anything is used, and neither a
// key nor its wrapped form is left in the database files (-wal and -shm included) after a
// shred; no key is ever in them in plaintext.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include "loom/compliance/memory_key_store.h"
#include "loom/compliance/sqlite_key_store.h"
#include "loom/postgres/postgres_key_store.h"
#include "loom/util/error.h"
#include "support/postgres_server.h"
#include "support/sqlite_fault_vfs.h"
#include "support/temp_dir.h"

namespace loom::compliance::conformance {

using loom::testing::TempDir;
namespace {

namespace fs = std::filesystem;

std::array<uint8_t, 32> masterKey(uint8_t fill) {
  std::array<uint8_t, 32> k{};
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(fill + i * 7);
  return k;
}

std::unique_ptr<KeyStore> openSqlite(const fs::path& dir, uint8_t fill = 1) {
  return std::make_unique<SqliteKeyStore>(SqliteKeyStoreOptions{
      (dir / "keys.db").string(), masterKey(fill), "the test master key " + std::to_string(fill)});
}

struct KeyStoreFactory {
  std::string name;
  std::function<std::unique_ptr<KeyStore>(const fs::path& dir)> open;
  bool persistent = false;
  // Why the implementation cannot run here (no server); unset or "": it can.
  std::function<std::string()> unavailable;
};

// A schema of its own per test on the test cluster (support/postgres_server.h).
std::unique_ptr<KeyStore> openPostgres(const fs::path& dir, uint8_t fill = 1) {
  postgres::PostgresOptions database{loom::testing::testPostgresUrl(),
                                     loom::testing::testSchemaFor(dir)};
  postgres::migrate(database);
  return std::make_unique<postgres::PostgresKeyStore>(postgres::PostgresKeyStoreOptions{
      database, masterKey(fill), "the test master key " + std::to_string(fill)});
}

void PrintTo(const KeyStoreFactory& f, std::ostream* os) { *os << f.name; }

class KeyStoreConformance : public ::testing::TestWithParam<KeyStoreFactory> {
 protected:
  void SetUp() override {
    if (GetParam().unavailable) {
      std::string why = GetParam().unavailable();
      if (!why.empty()) GTEST_SKIP() << why;
    }
    store_ = GetParam().open(scratch_.path());
  }
  KeyStore& store() { return *store_; }
  void reopen() {
    store_.reset();
    store_ = GetParam().open(scratch_.path());
  }

 private:
  TempDir scratch_;  // declared first: outlives the store
  std::unique_ptr<KeyStore> store_;
};

bool sameKey(const DataKey& a, const DataKey& b) {
  return a.id() == b.id() && a.bytes() == b.bytes();
}

TEST_P(KeyStoreConformance, GetOrCreateIsIdempotentAndKeysDifferBySubject) {
  DataKey alice = store().getOrCreate("alice");
  EXPECT_FALSE(alice.id().empty());
  EXPECT_NE((std::array<uint8_t, 32>{}), alice.bytes());
  EXPECT_TRUE(sameKey(alice, store().getOrCreate("alice")));
  DataKey bob = store().getOrCreate("bob");
  EXPECT_NE(alice.id(), bob.id());
  EXPECT_NE(alice.bytes(), bob.bytes());
}

TEST_P(KeyStoreConformance, EmptySubjectIsInvalidArgument) {
  EXPECT_THROW(store().getOrCreate(""), InvalidArgumentError);
}

TEST_P(KeyStoreConformance, ConcurrentFirstCallsAgreeOnOneKey) {
  constexpr int kThreads = 8;
  constexpr int kSubjects = 20;
  std::barrier start(kThreads);
  std::vector<std::vector<DataKey>> seen(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        for (int s = 0; s < kSubjects; ++s) {
          seen[t].push_back(store().getOrCreate("subject-" + std::to_string(s)));
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << t << ": " << e.what();
        failures++;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(0, failures.load());
  for (int s = 0; s < kSubjects; ++s) {
    for (int t = 1; t < kThreads; ++t) {
      EXPECT_TRUE(sameKey(seen[0][s], seen[t][s])) << "subject " << s << ", thread " << t;
    }
  }
  EXPECT_EQ(static_cast<std::size_t>(kSubjects), store().subjects().size());
}

TEST_P(KeyStoreConformance, FindByIdReturnsTheKeyOnlyForItsSubject) {
  DataKey alice = store().getOrCreate("alice");
  store().getOrCreate("bob");
  std::optional<DataKey> found = store().find("alice", alice.id());
  ASSERT_TRUE(found);
  EXPECT_TRUE(sameKey(alice, *found));
  EXPECT_EQ(std::nullopt, store().find("alice", "no-such-key-id"));
  EXPECT_EQ(std::nullopt, store().find("bob", alice.id()));
  EXPECT_EQ(std::nullopt, store().find("carol", alice.id()));
}

TEST_P(KeyStoreConformance, ShredIsTrueThenFalseAndTheKeyIsGone) {
  DataKey alice = store().getOrCreate("alice");
  DataKey bob = store().getOrCreate("bob");
  EXPECT_FALSE(store().wasShredded("alice"));
  EXPECT_TRUE(store().shred("alice"));
  EXPECT_FALSE(store().shred("alice"));
  EXPECT_FALSE(store().shred("never-had-a-key"));
  EXPECT_EQ(std::nullopt, store().find("alice", alice.id()));
  EXPECT_TRUE(store().wasShredded("alice"));
  EXPECT_FALSE(store().wasShredded("never-had-a-key"));
  EXPECT_FALSE(store().wasShredded("bob"));
  std::optional<DataKey> stillBob = store().find("bob", bob.id());
  ASSERT_TRUE(stillBob);
  EXPECT_TRUE(sameKey(bob, *stillBob));
  EXPECT_EQ(std::vector<std::string>{"bob"}, store().subjects());
}

TEST_P(KeyStoreConformance, NewKeyAfterShredHasANewIdAndTheOldIdStaysGone) {
  DataKey old = store().getOrCreate("alice");
  ASSERT_TRUE(store().shred("alice"));
  DataKey fresh = store().getOrCreate("alice");
  EXPECT_NE(old.id(), fresh.id());
  EXPECT_NE(old.bytes(), fresh.bytes());
  EXPECT_EQ(std::nullopt, store().find("alice", old.id()));
  EXPECT_TRUE(store().find("alice", fresh.id()));
  EXPECT_TRUE(store().wasShredded("alice")) << "the tombstone outlives the new key";
  EXPECT_EQ(std::vector<std::string>{"alice"}, store().subjects());
}

TEST_P(KeyStoreConformance, SubjectsListsSubjectsWithAKey) {
  EXPECT_TRUE(store().subjects().empty());
  for (std::string s : {"carol", "alice", "bob"}) store().getOrCreate(s);
  std::vector<std::string> subjects = store().subjects();
  EXPECT_EQ((std::set<std::string>{"alice", "bob", "carol"}),
            std::set<std::string>(subjects.begin(), subjects.end()));
}

TEST_P(KeyStoreConformance, PersistentStoreKeepsKeysAndTombstonesAcrossReopening) {
  if (!GetParam().persistent) GTEST_SKIP() << "not a persistent store";
  DataKey alice = store().getOrCreate("alice");
  store().getOrCreate("bob");
  ASSERT_TRUE(store().shred("bob"));
  reopen();
  std::optional<DataKey> found = store().find("alice", alice.id());
  ASSERT_TRUE(found);
  EXPECT_TRUE(sameKey(alice, *found));
  EXPECT_TRUE(sameKey(alice, store().getOrCreate("alice")));
  EXPECT_TRUE(store().wasShredded("bob"));
  EXPECT_EQ(std::vector<std::string>{"alice"}, store().subjects());
}

INSTANTIATE_TEST_SUITE_P(
    Stores, KeyStoreConformance,
    ::testing::Values(
        KeyStoreFactory{"Memory",
                        [](const fs::path&) -> std::unique_ptr<KeyStore> {
                          return std::make_unique<MemoryKeyStore>();
                        }},
        KeyStoreFactory{"Sqlite", [](const fs::path& dir) { return openSqlite(dir); }, true},
        KeyStoreFactory{"Postgres", [](const fs::path& dir) { return openPostgres(dir); }, true,
                        &loom::testing::postgresUnavailable}),
    [](const ::testing::TestParamInfo<KeyStoreFactory>& info) { return info.param.name; });

// ---- PostgreSQL only ----------------------------------------------------------------------

TEST(PostgresKeyStore, TheWrongMasterKeyIsAConfigErrorNamingItsOriginAndChangesNothing) {
  LOOM_SKIP_WITHOUT_POSTGRES();
  TempDir dir;
  DataKey alice = openPostgres(dir.path(), 1)->getOrCreate("alice");
  try {
    openPostgres(dir.path(), 2);
    FAIL() << "a store opened under another master key";
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("the test master key 2"), std::string::npos) << m;
    EXPECT_NE(m.find("does not open this key store"), std::string::npos) << m;
  }
  auto again = openPostgres(dir.path(), 1)->find("alice", alice.id());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->bytes(), alice.bytes());
}

// ---- SQLite only ----------------------------------------------------------------------------

std::string fileBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every byte of the database and its -wal and -shm files.
std::string databaseFiles(const fs::path& dir) {
  std::string all;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    fs::path p = dir / ("keys.db" + std::string(suffix));
    if (fs::exists(p)) all += fileBytes(p) + '\n';
  }
  return all;
}

std::string hex(const std::array<uint8_t, 32>& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::string raw(const std::array<uint8_t, 32>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The wrapped key column of a subject's row, read past the store.
std::string wrappedColumn(const fs::path& db, const std::string& subject) {
  sqlite3* h = nullptr;
  EXPECT_EQ(SQLITE_OK, sqlite3_open(db.string().c_str(), &h));
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(h, "SELECT wrapped FROM subject_keys WHERE subject = ?1", -1, &stmt, nullptr);
  sqlite3_bind_text(stmt, 1, subject.c_str(), -1, SQLITE_TRANSIENT);
  std::string out;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(h);
  return out;
}

TEST(SqliteKeyStore, ReopeningWithTheRightMasterKeyReadsTheSameKey) {
  TempDir dir;
  DataKey alice = openSqlite(dir.path())->getOrCreate("alice");
  auto reopened = openSqlite(dir.path());
  EXPECT_TRUE(sameKey(alice, reopened->getOrCreate("alice")));
}

TEST(SqliteKeyStore, TheWrongMasterKeyIsAConfigErrorNamingItsOriginAndChangesNothing) {
  TempDir dir;
  DataKey alice = openSqlite(dir.path(), 1)->getOrCreate("alice");
  try {
    openSqlite(dir.path(), 2);
    FAIL() << "opened with the wrong master key";
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_NE(std::string::npos, m.find("the test master key 2")) << m;
    EXPECT_NE(std::string::npos, m.find("does not open this key store")) << m;
  }
  EXPECT_TRUE(sameKey(alice, openSqlite(dir.path(), 1)->getOrCreate("alice")));
}

TEST(SqliteKeyStore, TwoStoresOnOneFileAgreeOnConcurrentFirstKeys) {
  TempDir dir;
  auto a = openSqlite(dir.path());
  auto b = openSqlite(dir.path());
  std::vector<DataKey> fromA, fromB;
  std::barrier start(2);
  std::thread ta([&] {
    start.arrive_and_wait();
    for (int i = 0; i < 30; ++i) fromA.push_back(a->getOrCreate("s" + std::to_string(i)));
  });
  std::thread tb([&] {
    start.arrive_and_wait();
    for (int i = 0; i < 30; ++i) fromB.push_back(b->getOrCreate("s" + std::to_string(i)));
  });
  ta.join();
  tb.join();
  ASSERT_EQ(30u, fromA.size());
  ASSERT_EQ(30u, fromB.size());
  for (int i = 0; i < 30; ++i) EXPECT_TRUE(sameKey(fromA[i], fromB[i])) << i;
}

TEST(SqliteKeyStore, KeysNeverAppearInPlaintextInTheDatabaseFiles) {
  TempDir dir;
  auto store = openSqlite(dir.path());
  std::vector<DataKey> keys;
  for (int i = 0; i < 50; ++i) keys.push_back(store->getOrCreate("subject-" + std::to_string(i)));
  std::string files = databaseFiles(dir.path());
  ASSERT_FALSE(files.empty());
  for (const DataKey& k : keys) {
    EXPECT_EQ(std::string::npos, files.find(raw(k.bytes()))) << k.id();
    EXPECT_EQ(std::string::npos, files.find(hex(k.bytes()))) << k.id();
    EXPECT_NE(std::string::npos, files.find(k.id())) << "the key id is stored in clear";
  }
  EXPECT_EQ(std::string::npos, files.find(raw(masterKey(1))));
  EXPECT_EQ(std::string::npos, files.find(hex(masterKey(1))));
}

TEST(SqliteKeyStore, AShreddedKeyLeavesNoTraceInTheDatabaseFilesIncludingTheWal) {
  TempDir dir;
  auto store = openSqlite(dir.path());
  for (int i = 0; i < 20; ++i) store->getOrCreate("other-" + std::to_string(i));
  DataKey alice = store->getOrCreate("alice");
  std::string wrapped = wrappedColumn(dir.path() / "keys.db", "alice");
  ASSERT_EQ(2u * (32 + 16), wrapped.size());
  EXPECT_NE(std::string::npos, databaseFiles(dir.path()).find(wrapped)) << "sanity: stored";
  ASSERT_TRUE(store->shred("alice"));
  std::string files = databaseFiles(dir.path());
  EXPECT_EQ(std::string::npos, files.find(wrapped)) << "the wrapped key survived the shred";
  EXPECT_EQ(std::string::npos, files.find(raw(alice.bytes())));
  EXPECT_EQ(std::string::npos, files.find(hex(alice.bytes())));
  store.reset();  // closing checkpoints whatever is left: still nothing
  files = databaseFiles(dir.path());
  EXPECT_EQ(std::string::npos, files.find(wrapped));
  EXPECT_EQ(std::nullopt, openSqlite(dir.path())->find("alice", alice.id()));
}

TEST(SqliteKeyStore, AShredWhoseCheckpointFailedIsFinishedWhenItIsRunAgain) {
  TempDir dir;
  loom::testing::SqliteFaultVfs vfs;  // before the store: its files go through it
  auto store = openSqlite(dir.path());
  for (int i = 0; i < 20; ++i) store->getOrCreate("other-" + std::to_string(i));
  store->getOrCreate("alice");
  std::string wrapped = wrappedColumn(dir.path() / "keys.db", "alice");
  ASSERT_EQ(96u, wrapped.size());
  // The delete commits to the WAL; copying it into keys.db then fails.
  vfs.fail(loom::testing::SqliteFaultVfs::Call::kWrite, "keys.db", SQLITE_IOERR_WRITE);
  try {
    store->shred("alice");
    FAIL() << "a shred whose checkpoint failed reported success";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(std::string::npos, m.find("subject 'alice' is shredded")) << m;
    EXPECT_NE(std::string::npos, m.find("`loom erase alice` again")) << m;
  }
  ASSERT_GT(vfs.failed(), 0);
  vfs.clear();
  ASSERT_NE(std::string::npos, databaseFiles(dir.path()).find(wrapped))
      << "sanity: the failed checkpoint left the wrapped key in the files";
  EXPECT_TRUE(store->wasShredded("alice"));
  EXPECT_FALSE(store->shred("alice"));  // shredded already; this time the checkpoint runs
  EXPECT_EQ(std::string::npos, databaseFiles(dir.path()).find(wrapped))
      << "the wrapped key of a shredded subject is still in the database files";
}

// A reader that holds the file (an inspector, a backup, a query) keeps the checkpoint from
// writing the new page over the old one: the old wrapped key stays in keys.db. The shred says
// so instead of reporting the erasure done; once the reader is gone, shredding again finishes.
TEST(SqliteKeyStore, AShredWhoseCheckpointAReaderBlocksIsNotReportedDone) {
  TempDir dir;
  auto store = std::make_unique<SqliteKeyStore>(
      SqliteKeyStoreOptions{.path = (dir.path() / "keys.db").string(),
                            .masterKey = masterKey(1),
                            .masterKeyOrigin = "the test master key",
                            .busyTimeoutMillis = 100});
  for (int i = 0; i < 20; ++i) store->getOrCreate("other-" + std::to_string(i));
  store->getOrCreate("alice");
  std::string wrapped = wrappedColumn(dir.path() / "keys.db", "alice");
  sqlite3* reader = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_open((dir.path() / "keys.db").c_str(), &reader));
  ASSERT_EQ(SQLITE_OK, sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM subject_keys;", nullptr,
                                    nullptr, nullptr));
  try {
    store->shred("alice");
    ADD_FAILURE() << "a shred whose old copy stays in the file reported success";
  } catch (const UnavailableError& e) {
    std::string m = e.what();
    EXPECT_NE(std::string::npos, m.find("another process kept reading")) << m;
    EXPECT_NE(std::string::npos, m.find("`loom erase alice` again")) << m;
  }
  EXPECT_TRUE(store->wasShredded("alice"));
  sqlite3_exec(reader, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(reader);
  EXPECT_FALSE(store->shred("alice"));  // shredded already; this time the checkpoint runs
  EXPECT_EQ(std::string::npos, databaseFiles(dir.path()).find(wrapped))
      << "the wrapped key of a shredded subject is still in the database files";
}

TEST(SqliteKeyStore, ShredsAcrossManyPagesLeaveNoWrappedKeyBehind) {
  TempDir dir;
  auto store = openSqlite(dir.path());
  for (int i = 0; i < 400; ++i) store->getOrCreate("subject-" + std::to_string(i));  // splits
  std::vector<std::string> wrapped;
  for (int i = 0; i < 400; i += 7) {
    wrapped.push_back(wrappedColumn(dir.path() / "keys.db", "subject-" + std::to_string(i)));
    ASSERT_TRUE(store->shred("subject-" + std::to_string(i)));
  }
  for (int i = 400; i < 500; ++i) store->getOrCreate("subject-" + std::to_string(i));  // reuse
  store.reset();
  std::string files = databaseFiles(dir.path());
  for (const std::string& w : wrapped) {
    ASSERT_EQ(96u, w.size());
    EXPECT_EQ(std::string::npos, files.find(w));
  }
}

TEST(SqliteKeyStore, AStoreOfANewerSchemaIsRefused) {
  TempDir dir;
  openSqlite(dir.path());
  sqlite3* h = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_open((dir.path() / "keys.db").string().c_str(), &h));
  ASSERT_EQ(SQLITE_OK, sqlite3_exec(h,
                                    "UPDATE key_store_meta SET value = '99' WHERE name = "
                                    "'schema'",
                                    nullptr, nullptr, nullptr));
  sqlite3_close(h);
  EXPECT_THROW(openSqlite(dir.path()), FailedPreconditionError);
}

TEST(SqliteKeyStore, EmptyPathIsInvalidArgument) {
  EXPECT_THROW(SqliteKeyStore(SqliteKeyStoreOptions{"", masterKey(1)}), InvalidArgumentError);
}

}  // namespace
}  // namespace loom::compliance::conformance
