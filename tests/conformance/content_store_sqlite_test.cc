// Tests of the SQLite content store beyond the conformance suite: its schema, a corrupt row,
// a database from a newer build, and two stores (as two processes) sharing one file.
#include <sqlite3.h>

#include <atomic>
#include <thread>

#include "content_store_conformance.h"
#include "loom/content/sqlite_content_store.h"
#include "loom/util/error.h"

namespace loom::content::conformance {
namespace {

// A raw connection to inspect or damage the file behind the store's back.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(SQLITE_OK, sqlite3_open(path.c_str(), &db_));
  }
  ~RawDb() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(SQLITE_OK, sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error))
        << sql << ": " << (error ? error : "");
    sqlite3_free(error);
  }
  std::string text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(SQLITE_OK, sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr)) << sql;
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      out = p ? p : "";
    }
    sqlite3_finalize(stmt);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

class SqliteContentStoreTest : public ::testing::Test {
 protected:
  std::string path() const { return (scratch_.path() / "content.db").string(); }
  std::unique_ptr<SqliteContentStore> open() {
    return std::make_unique<SqliteContentStore>(path(), clock_);
  }

  TempDir scratch_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kT0);
};

// Content schema 3: a rowid table (rows appended at its end) with a unique index on address.
TEST_F(SqliteContentStoreTest, BlobsAreRowsOfOneRowidTableInWalMode) {
  auto store = open();
  std::string address = store->put("abc");
  RawDb raw(path());
  std::string sql = raw.text("SELECT sql FROM sqlite_master WHERE name = 'blobs'");
  EXPECT_EQ(std::string::npos, sql.find("WITHOUT ROWID")) << sql;
  EXPECT_NE(std::string::npos,
            raw.text("SELECT sql FROM sqlite_master WHERE name = 'blobs_by_address'")
                .find("UNIQUE INDEX"));
  EXPECT_EQ("wal", raw.text("PRAGMA journal_mode"));
  EXPECT_EQ("3", raw.text("SELECT value FROM content_meta WHERE key = 'content_schema'"));
  EXPECT_EQ(address + "|3|" + std::to_string(kT0) + "|blob",
            raw.text("SELECT address || '|' || size || '|' || touched_at || '|' || "
                     "typeof(bytes) FROM blobs"));
}

TEST_F(SqliteContentStoreTest, CorruptedBytesInTheRowAreDataLossUntilPutAgain) {
  auto store = open();
  std::string bytes = randomBytes(5000, 8);
  std::string address = store->put(bytes);
  RawDb(path()).exec("UPDATE blobs SET bytes = zeroblob(5000) WHERE address = '" + address + "'");
  try {
    store->get(address);
    ADD_FAILURE() << "no error";
  } catch (const DataLossError& e) {
    std::string what = e.what();
    EXPECT_NE(std::string::npos, what.find(address)) << what;
    EXPECT_NE(std::string::npos, what.find(path())) << what;
  }
  EXPECT_TRUE(store->has(address));
  EXPECT_EQ(address, store->put(bytes));
  EXPECT_EQ(bytes, store->get(address));
}

// Content schema 2: bytes that compress by a tenth or more are one zstd frame in the row; the
// address and size still describe the bytes themselves.
TEST_F(SqliteContentStoreTest, CompressibleBytesAreKeptAsOneZstdFrame) {
  auto store = open();
  std::string text;
  for (int i = 0; i < 200; ++i) text += "{\"row\": " + std::to_string(i) + ", \"status\": \"ok\"},";
  std::string address = store->put(text);
  std::string noise = store->put(randomBytes(4000, 3));
  RawDb raw(path());
  EXPECT_EQ("1", raw.text("SELECT encoding FROM blobs WHERE address = '" + address + "'"));
  EXPECT_LT(
      std::stol(raw.text("SELECT length(bytes) FROM blobs WHERE address = '" + address + "'")),
      static_cast<long>(text.size()) / 2);
  EXPECT_EQ("0", raw.text("SELECT encoding FROM blobs WHERE address = '" + noise + "'"))
      << "bytes that do not compress stay raw";
  EXPECT_EQ(text, store->get(address));
  EXPECT_EQ(static_cast<int64_t>(text.size()), store->stat(address)->size);
}

TEST_F(SqliteContentStoreTest, ACorruptFrameOrAnUnknownEncodingIsDataLossNamingTheBlob) {
  auto store = open();
  std::string text(5000, 'a');
  std::string address = store->put(text);
  for (const std::string& damage : {std::string("UPDATE blobs SET bytes = zeroblob(40)"),
                                    std::string("UPDATE blobs SET size = 4999"),
                                    std::string("UPDATE blobs SET encoding = 7")}) {
    store->put(text);  // repairs the row
    RawDb(path()).exec(damage + " WHERE address = '" + address + "'");
    try {
      store->get(address);
      ADD_FAILURE() << damage << ": no error";
    } catch (const DataLossError& e) {
      EXPECT_NE(std::string::npos, std::string(e.what()).find(address)) << e.what();
    }
  }
  store->put(text);
  EXPECT_EQ(text, store->get(address));
}

// A file written under content schema 1 (no encoding column) is migrated when opened: its rows
// read as they are, and new puts may compress.
TEST_F(SqliteContentStoreTest, ASchemaOneFileIsMigratedInPlace) {
  std::string old = "written under schema 1";
  {
    RawDb raw(path());
    raw.exec("PRAGMA journal_mode = WAL");
    raw.exec("CREATE TABLE content_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    raw.exec("INSERT INTO content_meta VALUES ('content_schema', '1')");
    raw.exec(
        "CREATE TABLE blobs (address TEXT PRIMARY KEY, bytes BLOB NOT NULL, size INTEGER "
        "NOT NULL, touched_at INTEGER NOT NULL) WITHOUT ROWID");
    raw.exec("INSERT INTO blobs VALUES ('" + sha256Hex(old) + "', CAST('" + old + "' AS BLOB), " +
             std::to_string(old.size()) + ", " + std::to_string(kT0) + ")");
  }
  auto store = open();
  EXPECT_EQ(old, store->get(sha256Hex(old)));
  EXPECT_EQ("3", RawDb(path()).text("SELECT value FROM content_meta WHERE key = 'content_schema'"));
  std::string text(3000, 'z');
  EXPECT_EQ(text, store->get(store->put(text)));
}

// A file written under content schema 2 (a WITHOUT ROWID table keyed by address) is moved into
// schema 3's rowid table when opened: every row with its bytes, encoding and touch, and the
// address still unique.
TEST_F(SqliteContentStoreTest, ASchemaTwoFileIsMovedIntoARowidTable) {
  std::string raw = "kept raw under schema 2";
  std::string framed(3000, 'f');
  std::string framedAddress;
  {
    auto store = open();  // today's layout, then rewritten as schema 2 had it
    framedAddress = store->put(framed);
  }
  {
    RawDb db(path());
    db.exec("ALTER TABLE blobs RENAME TO blobs_now");
    db.exec("DROP INDEX blobs_by_address");
    db.exec(
        "CREATE TABLE blobs (address TEXT PRIMARY KEY, bytes BLOB NOT NULL, size INTEGER NOT "
        "NULL, touched_at INTEGER NOT NULL, encoding INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID");
    db.exec("INSERT INTO blobs SELECT address, bytes, size, touched_at, encoding FROM blobs_now");
    db.exec("DROP TABLE blobs_now");
    db.exec("INSERT INTO blobs VALUES ('" + sha256Hex(raw) + "', CAST('" + raw + "' AS BLOB), " +
            std::to_string(raw.size()) + ", " + std::to_string(kT0 + 5) + ", 0)");
    db.exec("UPDATE content_meta SET value = '2' WHERE key = 'content_schema'");
  }
  auto store = open();
  EXPECT_EQ(raw, store->get(sha256Hex(raw)));
  EXPECT_EQ(framed, store->get(framedAddress));
  EXPECT_EQ(kT0 + 5, store->stat(sha256Hex(raw))->lastTouchedMillis);
  RawDb db(path());
  EXPECT_EQ("3", db.text("SELECT value FROM content_meta WHERE key = 'content_schema'"));
  EXPECT_EQ(std::string::npos,
            db.text("SELECT sql FROM sqlite_master WHERE name = 'blobs'").find("WITHOUT ROWID"));
  EXPECT_EQ("1", db.text("SELECT encoding FROM blobs WHERE address = '" + framedAddress + "'"));
  EXPECT_EQ(framedAddress, store->put(framed)) << "a put of stored bytes is still one row";
  EXPECT_EQ("2", db.text("SELECT count(*) FROM blobs"));
  EXPECT_FALSE(store->deleteIfUntouchedSince(sha256Hex(raw), kT0 + 5));
  EXPECT_TRUE(store->deleteIfUntouchedSince(sha256Hex(raw), kT0 + 6));
}

TEST_F(SqliteContentStoreTest, DatabaseFromANewerBuildIsRefused) {
  open();
  RawDb(path()).exec("UPDATE content_meta SET value = '99' WHERE key = 'content_schema'");
  try {
    open();
    ADD_FAILURE() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("content schema 99")) << e.what();
  }
}

TEST_F(SqliteContentStoreTest, NotADatabaseIsDataLoss) {
  {
    std::FILE* f = std::fopen(path().c_str(), "wb");
    std::fputs("this is not a database, it is a text file that is long enough to matter....", f);
    std::fclose(f);
  }
  EXPECT_THROW(open(), DataLossError);
}

// Two stores on one file behave as two processes: each one's puts are visible to the other,
// and a put through one races a conditional delete through the other without losing a blob.
TEST_F(SqliteContentStoreTest, TwoStoresShareOneFileAndItsConditionalDelete) {
  auto a = open();
  auto b = open();
  std::string address = a->put("shared");
  EXPECT_EQ("shared", b->get(address));
  for (int r = 0; r < 50; ++r) {
    std::string bytes = "round " + std::to_string(r);
    std::string addr = a->put(bytes);
    clock_->advance(10);
    std::atomic<bool> putDone{false};
    std::thread deleter([&] {
      bool last = false;
      while (!last) {
        last = putDone;
        b->deleteIfUntouchedSince(addr, kT0 + 10 * r + 5);
      }
    });
    a->put(bytes);
    putDone = true;
    deleter.join();
    ASSERT_EQ(bytes, b->get(addr)) << "round " << r;
  }
}

}  // namespace
}  // namespace loom::content::conformance
