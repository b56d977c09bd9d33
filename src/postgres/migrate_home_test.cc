// migrateHome's own checks beyond the CLI test (tests/cli/postgres_cli_test.cc): a listing of
// the home's content store that comes up short (a folder it could not read whole) is refused,
// never reported as copied; a schema used since an earlier copy (an erasure on the server) is
// refused before anything is written. Skipped without the test cluster; a schema of its own.
#include "migrate_home.h"

#include <gtest/gtest.h>

#include "loom/compliance/sqlite_key_store.h"
#include "loom/content/forwarding_content_store.h"
#include "loom/content/memory_content_store.h"
#include "loom/kernel/memory_snapshot_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/postgres/postgres_admin.h"
#include "loom/postgres/postgres_content_store.h"
#include "loom/postgres/postgres_key_store.h"
#include "loom/util/error.h"
#include "support/postgres_server.h"
#include "support/temp_dir.h"

namespace loom::postgres {
namespace {

// The home's content store as a folder that cannot be read to its end: one blob is never
// listed, though it is there.
class ShortListing : public content::ForwardingContentStore {
 public:
  ShortListing(content::ContentStore& target, std::string hidden)
      : ForwardingContentStore(target), hidden_(std::move(hidden)) {}
  void forEachBlob(const std::function<void(const content::BlobInfo&)>& visit) const override {
    ForwardingContentStore::forEachBlob([&](const content::BlobInfo& blob) {
      if (blob.address != hidden_) visit(blob);
    });
  }

 private:
  std::string hidden_;
};

class MigrateHomeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LOOM_SKIP_WITHOUT_POSTGRES();
    cited_ = blobs_.put("a tool's offloaded output");
    unlisted_ = blobs_.put("an output only the ledger-less log cites");
    // A step whose output cites both blobs, and a look-alike the home never held.
    json::object output{{"first", json::object{{"__loomContent", cited_}}},
                        {"second", json::object{{"__loomContent", unlisted_}}},
                        {"forged", json::object{{"__loomContent", std::string(64, 'e')}}}};
    events_.append("run-1", 1,
                   {kernel::executionStarted("wf", json::object{}, "", 1),
                    kernel::stepCompleted("s1", "tool", "fetch", output, 2)});
    postgres::migrate(to());
  }
  PostgresOptions to() const {
    return {loom::testing::testPostgresUrl(), loom::testing::testSchemaFor(dir_.path())};
  }
  HomeSource home(content::ContentStore& blobs) {
    return {dir_.path() / "loom.db", events_, snapshots_, &blobs, nullptr};
  }

  loom::testing::TempDir dir_;
  kernel::SqliteEventStore events_{{.path = (dir_.path() / "loom.db").string()}};
  kernel::MemorySnapshotStore snapshots_;
  content::MemoryContentStore blobs_{systemClock()};
  std::string cited_;
  std::string unlisted_;
};

TEST_F(MigrateHomeTest, ABlobTheHomesListingMissedIsRefusedNotReportedCopied) {
  ShortListing shortListing(blobs_, unlisted_);
  try {
    migrateHome(home(shortListing), to(), [](const std::string&) {});
    FAIL() << "a copy missing a cited blob was reported done";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("blob " + unlisted_), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("was not copied"), std::string::npos) << e.what();
  }
  // Run again over a store that lists everything: the rest is copied and verified.
  MigrateHomeReport report = migrateHome(home(blobs_), to(), [](const std::string&) {});
  EXPECT_EQ(report.blobs, 2);
  PostgresContentStore there(to());
  EXPECT_EQ(there.get(unlisted_), "an output only the ledger-less log cites");
  EXPECT_FALSE(there.has(std::string(64, 'e')));  // the look-alike was never the copy's to prove
}

TEST_F(MigrateHomeTest, ASubjectErasedOnTheServerSinceTheCopyNeverComesBack) {
  auto master = compliance::parseMasterKey(compliance::newMasterKeyHex(), "test");
  {
    compliance::SqliteKeyStore homeKeys(
        {.path = (dir_.path() / "loom.db").string(), .masterKey = master});
    homeKeys.getOrCreate("alice");
    homeKeys.getOrCreate("bob");
  }
  migrateHome(home(blobs_), to(), [](const std::string&) {});
  PostgresKeyStore serverKeys({.database = to(), .masterKey = master});
  ASSERT_TRUE(serverKeys.shred("alice"));  // `loom erase alice` on the server

  try {
    migrateHome(home(blobs_), to(), [](const std::string&) {});
    FAIL() << "a copy over an erasure was not refused";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("subject 'alice' is erased in the schema"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(serverKeys.find("alice", "any").has_value());
  EXPECT_EQ(serverKeys.subjects(), std::vector<std::string>{"bob"}) << "alice's key came back";
  EXPECT_TRUE(serverKeys.wasShredded("alice"));
}

TEST_F(MigrateHomeTest, ARunThatWentOnOnTheServerIsRefusedBeforeAnyWrite) {
  migrateHome(home(blobs_), to(), [](const std::string&) {});
  PostgresEventStore server(to());
  server.append("run-1", 3, {kernel::stepCompleted("s2", "tool", "fetch", json::value(1), 3)});
  std::string later = blobs_.put("put in the home after the copy");
  try {
    migrateHome(home(blobs_), to(), [](const std::string&) {});
    FAIL() << "a schema whose run went on was copied over";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("it went on on the server"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("Keep using the schema"), std::string::npos);
  }
  EXPECT_FALSE(PostgresContentStore(to()).has(later)) << "written before the refusal";
}

TEST_F(MigrateHomeTest, AControlLogWrittenOnTheServerSinceTheCopyIsRefusedBeforeAnyWrite) {
  migrateHome(home(blobs_), to(), [](const std::string&) {});
  PostgresEventStore server(to());
  kernel::appendControlAtEnd(server,
                             kernel::ControlEvent{0, "BLOB_READ", 5, json::object{{"by", "test"}}});
  std::string later = blobs_.put("put in the home after the copy");
  try {
    migrateHome(home(blobs_), to(), [](const std::string&) {});
    FAIL() << "a schema used since the copy was copied over";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("control log"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(PostgresContentStore(to()).has(later)) << "written before the refusal";
}

}  // namespace
}  // namespace loom::postgres
