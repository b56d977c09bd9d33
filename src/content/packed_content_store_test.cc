// PackedContentStore (ADR 0014): where blobs go, how the two places agree, that a packed put is
// durable by the next flushed commit to its database (a power-loss model over SQLite's own
// files), and that a delete leaves no copy of the bytes. The conformance suite runs it too
// (tests/conformance/content_store_implementations.cc, "Packed").
#include "loom/content/packed_content_store.h"

#include <gtest/gtest.h>
#include <sodium.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "loom/kernel/event.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"
#include "support/sqlite_fault_vfs.h"
#include "support/temp_dir.h"

namespace loom::content {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kT0 = 1'700'000'000'000;

std::string fileBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class PackedContentStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<PackedContentStore> open(int64_t packBelow = 64) {
    auto pack = std::make_shared<SqliteContentStore>(database().string(), clock_, 5000,
                                                     SqliteContentCommit::kWithDatabase);
    files_ = std::make_shared<FilesystemContentStore>(dir_.path() / "blobs", clock_);
    return std::make_unique<PackedContentStore>(std::move(pack), files_, packBelow);
  }
  fs::path database() const { return dir_.path() / "loom.db"; }
  std::shared_ptr<FilesystemContentStore> files_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kT0);
  loom::testing::TempDir dir_{"packed"};
};

TEST_F(PackedContentStoreTest, SmallBlobsAreRowsAndLargerOnesFiles) {
  auto store = open(64);
  std::string small = store->put("a small result");
  std::string large = store->put(std::string(64, 'x'));
  EXPECT_TRUE(store->pack().has(small));
  EXPECT_FALSE(fs::exists(files_->blobPath(small)));
  EXPECT_FALSE(store->pack().has(large));
  EXPECT_TRUE(fs::exists(files_->blobPath(large)));
  EXPECT_EQ("a small result", store->get(small));
  EXPECT_EQ(std::string(64, 'x'), store->get(large));
}

// A blob an older build (or packBelowBytes = 0) wrote as a file is touched where it is.
TEST_F(PackedContentStoreTest, APutOfBytesStoredAsAFileTouchesTheFile) {
  std::string address = open(0)->put("written as a file");
  clock_->advance(5000);
  auto store = open(64);
  EXPECT_EQ(address, store->put("written as a file"));
  EXPECT_FALSE(store->pack().has(address)) << "equal bytes must not take space twice";
  EXPECT_EQ(kT0 + 5000, store->stat(address)->lastTouchedMillis);
}

// The same bytes packed and as a file (packing switched off and on): one blob, deleted only
// when no copy is left, and a copy touched since the cutoff spares it.
TEST_F(PackedContentStoreTest, ABlobInBothPlacesIsOneBlob) {
  std::string address = open(64)->put("both");
  clock_->advance(10'000);
  auto store = open(64);
  files_->put("both");  // a file copy touched at kT0 + 10 s (as an older build's put)
  int visits = 0;
  store->forEachBlob([&](const BlobInfo& b) { visits += b.address == address; });
  EXPECT_EQ(1, visits);
  EXPECT_FALSE(store->deleteIfUntouchedSince(address, kT0 + 5000)) << "the file copy is newer";
  EXPECT_TRUE(store->has(address));
  EXPECT_EQ("both", store->get(address));
  EXPECT_TRUE(store->deleteIfUntouchedSince(address, kT0 + 20'000));
  EXPECT_FALSE(store->has(address));
}

// The bytes of the row of `address` as stored (a zstd frame when they compressed).
std::string storedRow(const fs::path& database, const std::string& address) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(database.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* select = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, "SELECT bytes FROM blobs WHERE address = ?1", -1, &select, nullptr) ==
      SQLITE_OK) {
    sqlite3_bind_text(select, 1, address.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(select) == SQLITE_ROW) {
      out.assign(static_cast<const char*>(sqlite3_column_blob(select, 0)),
                 static_cast<std::size_t>(sqlite3_column_bytes(select, 0)));
    }
  }
  sqlite3_finalize(select);
  sqlite3_close(db);
  return out;
}

void expectInNoFile(const fs::path& dir, const std::string& bytes, const std::string& what) {
  for (const auto& f : fs::recursive_directory_iterator(dir)) {
    if (!f.is_regular_file()) continue;
    EXPECT_EQ(std::string::npos, fileBytes(f.path()).find(bytes))
        << f.path() << " still holds " << what;
  }
}

// With another packBelowBytes, bytes already stored in the other place are touched there.
TEST_F(PackedContentStoreTest, APutTouchesACopyInTheOtherPlace) {
  std::string address = open(64)->put("packed first");
  clock_->advance(5000);
  auto store = open(0);  // packing off: new blobs are files
  EXPECT_EQ(address, store->put("packed first"));
  EXPECT_FALSE(std::filesystem::exists(files_->blobPath(address)));
  EXPECT_EQ(kT0 + 5000, store->stat(address)->lastTouchedMillis);
}

// A corrupt row of a blob that also has a good file copy: the file serves it.
TEST_F(PackedContentStoreTest, ACorruptRowFallsBackToAGoodFileCopy) {
  auto store = open(64);
  std::string address = store->put("kept twice");
  files_->put("kept twice");
  sqlite3* db = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_open(database().c_str(), &db));
  std::string sql =
      "UPDATE blobs SET bytes = CAST('kept twicX' AS BLOB) WHERE address = '" + address + "'";
  ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr));
  sqlite3_close(db);
  EXPECT_EQ("kept twice", store->get(address));
  files_->remove(address);
  EXPECT_THROW(store->get(address), DataLossError) << "no good copy left";
}

// An erased blob's bytes are in no file of the home: the row's pages are zeroed and the WAL
// that held its frames is truncated. Both encodings: raw (random bytes) and a zstd frame.
TEST_F(PackedContentStoreTest, ADeleteLeavesTheBytesInNoFile) {
  auto store = open(1 << 20);
  std::string noise(3000, '\0');
  randombytes_buf(noise.data(), noise.size());
  std::string raw = store->put("alice's medical record " + noise);
  std::string framed = store->put("alice's letters " + std::string(3000, 'm'));
  store->put("kept " + std::string(3000, 'k'));
  std::string rawRow = storedRow(database(), raw);
  std::string frameRow = storedRow(database(), framed);
  ASSERT_NE(std::string::npos, rawRow.find("alice's medical record")) << "stored raw";
  ASSERT_LT(frameRow.size(), 1000u) << "stored as a frame";
  clock_->advance(1000);
  ASSERT_TRUE(store->remove(raw));
  ASSERT_TRUE(store->deleteIfUntouchedSince(framed, kT0 + 1000));
  expectInNoFile(dir_.path(), rawRow.substr(0, 200), "the deleted raw row");
  expectInNoFile(dir_.path(), frameRow, "the deleted frame");
}

// The same after a sweep's walk that deleted from inside the walk (whose read transaction kept
// the WAL from being truncated at each delete).
TEST_F(PackedContentStoreTest, DeletesInsideAWalkLeaveTheBytesInNoFileOnceItEnds) {
  auto store = open(1 << 20);
  std::vector<std::string> rows;
  for (int i = 0; i < 5; ++i) {
    std::string noise(2000, '\0');
    randombytes_buf(noise.data(), noise.size());
    rows.push_back(storedRow(database(), store->put("secret " + noise)));
  }
  clock_->advance(1000);
  store->forEachBlob([&](const BlobInfo& b) {
    EXPECT_TRUE(store->deleteIfUntouchedSince(b.address, kT0 + 1000));
  });
  for (const auto& row : rows) expectInNoFile(dir_.path(), row.substr(0, 200), "deleted bytes");
}

// ---- A power-loss model: SQLite's files as of each flush of loom.db or its WAL. The state
// after flush i is each file as of its own last flush: what a power loss right after it may
// leave (every write not flushed lost). ----

struct Flushed {
  std::map<std::string, std::string> files;  // file name -> bytes as of its last flush
};

// Records the flushes of `folder`'s loom.db and loom.db-wal for its scope.
class FlushRecorder {
 public:
  explicit FlushRecorder(fs::path folder) : folder_(std::move(folder)) {
    for (const char* name : {"loom.db", "loom.db-wal"}) {  // flushed by their FULL commits
      if (fs::exists(folder_ / name)) current_.files[name] = fileBytes(folder_ / name);
    }
    vfs_.onSync = [this](const std::string& path) {
      std::string name = fs::path(path).filename().string();
      if (fs::path(path).parent_path() != folder_ || (name != "loom.db" && name != "loom.db-wal")) {
        return;
      }
      current_.files[name] = fileBytes(path);
      flushes.push_back(current_);
    };
  }
  std::vector<Flushed> flushes;

 private:
  fs::path folder_;
  Flushed current_;
  loom::testing::SqliteFaultVfs vfs_;
};

// Opens what one flush left (in its own folder, read-only) and returns the packed addresses
// and the rows `citations` selects (by default the rows of `citing`).
std::pair<std::vector<std::string>, std::vector<std::string>> recover(
    const Flushed& state, const fs::path& dir,
    const char* citations = "SELECT address FROM citing") {
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [name, bytes] : state.files)
    std::ofstream(dir / name, std::ios::binary) << bytes;
  sqlite3* db = nullptr;
  sqlite3_open((dir / "loom.db").c_str(), &db);
  auto column = [&](const char* sql) {
    std::vector<std::string> out;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK) {
      while (sqlite3_step(s) == SQLITE_ROW) {
        out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
      }
    }
    sqlite3_finalize(s);
    return out;
  };
  auto result = std::make_pair(column("SELECT address FROM blobs"), column(citations));
  sqlite3_close(db);
  return result;
}

// A packed put does not flush; the next flushed commit to the database (here a citation, as
// the event store's append is) carries it. At every flush, a citation that survived has its
// blob beside it.
TEST_F(PackedContentStoreTest, APowerLossNeverKeepsACitationWithoutItsPackedBlob) {
  fs::path home = dir_.path() / "home";
  fs::create_directories(home);
  sqlite3* log = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_open((home / "loom.db").c_str(), &log));
  sqlite3_exec(log,
               "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
               "CREATE TABLE IF NOT EXISTS citing (address TEXT)",
               nullptr, nullptr, nullptr);
  FlushRecorder recorder(home);
  std::vector<std::string> cited;
  {
    SqliteContentStore pack((home / "loom.db").string(), clock_, 5000,
                            SqliteContentCommit::kWithDatabase);
    sqlite3* citer = nullptr;
    ASSERT_EQ(SQLITE_OK, sqlite3_open((home / "loom.db").c_str(), &citer));
    sqlite3_exec(citer, "PRAGMA synchronous = FULL", nullptr, nullptr, nullptr);
    for (int i = 0; i < 6; ++i) {
      std::size_t before = recorder.flushes.size();
      std::string address = pack.put("result " + std::to_string(i) + std::string(900, 'r'));
      EXPECT_EQ(before, recorder.flushes.size()) << "a packed put flushed on its own";
      std::string sql = "INSERT INTO citing VALUES ('" + address + "')";
      ASSERT_EQ(SQLITE_OK, sqlite3_exec(citer, sql.c_str(), nullptr, nullptr, nullptr));
      EXPECT_GT(recorder.flushes.size(), before) << "the citing commit did not flush";
      cited.push_back(address);
    }
    sqlite3_close(citer);
  }
  sqlite3_close(log);
  ASSERT_GE(recorder.flushes.size(), 6u);
  std::size_t citedAtLast = 0;
  for (std::size_t i = 0; i < recorder.flushes.size(); ++i) {
    auto [blobs, citations] = recover(recorder.flushes[i], dir_.path() / "recovered");
    for (const auto& c : citations) {
      EXPECT_NE(std::find(blobs.begin(), blobs.end(), c), blobs.end())
          << "after flush " << i << " a citation of " << c << " survived without its blob";
    }
    citedAtLast = citations.size();
  }
  EXPECT_EQ(cited.size(), citedAtLast) << "the last flush holds every citation";
}

// The same with the pack putting on the writer its log lends (ADR 0017), as the embedded home
// does: a put's group commits without a flush, the log's next append flushes it; and with the
// put deferred to that append's commit (ADR 0019, what claim-check does). At every flush, an
// event that survived has every blob it cites beside it.
TEST_F(PackedContentStoreTest, APowerLossNeverKeepsAnEventWithoutTheBlobItsLogsWriterPut) {
  for (bool deferred : {false, true}) {
    SCOPED_TRACE(deferred ? "putDeferred" : "put");
    fs::path home = dir_.path() / (deferred ? "deferred" : "home");
    fs::create_directories(home);
    std::string database = (home / "loom.db").string();
    { kernel::SqliteEventStore create({database}); }  // the file in WAL mode, before recording
    FlushRecorder recorder(home);
    std::vector<std::string> cited;
    {
      kernel::SqliteEventStore log({database, kernel::Durability::kFull});
      SqliteContentStore pack(database, clock_, 5000, SqliteContentCommit::kWithDatabase,
                              log.lendWriter());
      int64_t next = log.append("run", 1, {kernel::executionStarted("wf", nullptr, {}, kT0)});
      for (int i = 0; i < 6; ++i) {
        std::size_t before = recorder.flushes.size();
        std::string bytes = "result " + std::to_string(i) + std::string(900, 'r');
        std::string address = deferred ? pack.putDeferred(bytes) : pack.put(bytes);
        EXPECT_EQ(before, recorder.flushes.size()) << "a packed put flushed on its own";
        next = log.append("run", next,
                          {kernel::stepCompleted("s" + std::to_string(i), "flow", "s",
                                                 json::value{{"ref", address}}, kT0)});
        EXPECT_GT(recorder.flushes.size(), before) << "the citing append did not flush";
        cited.push_back(address);
      }
    }
    ASSERT_GE(recorder.flushes.size(), 6u);
    std::size_t citedAtLast = 0;
    for (std::size_t i = 0; i < recorder.flushes.size(); ++i) {
      auto [blobs, bodies] = recover(recorder.flushes[i], dir_.path() / "recovered",
                                     "SELECT CAST(body AS TEXT) FROM events");
      citedAtLast = 0;
      for (const auto& address : cited) {
        bool citedHere = std::any_of(bodies.begin(), bodies.end(), [&](const std::string& b) {
          return b.find(address) != std::string::npos;
        });
        if (!citedHere) continue;
        ++citedAtLast;
        EXPECT_NE(std::find(blobs.begin(), blobs.end(), address), blobs.end())
            << "after flush " << i << " an event citing " << address << " survived without it";
      }
    }
    EXPECT_EQ(cited.size(), citedAtLast) << "the last flush holds every citing event";
  }
}

}  // namespace
}  // namespace loom::content
