// The blob ledger conformance suite: compliance::BlobLedger over every BlobLedgerRows
// implementation (the home's SQLite database, a PostgreSQL schema): who put which blob, as
// erasure reads it (compliance/erase.cc). Adding an implementation is one factory at the bottom.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>

#include "loom/compliance/blob_ledger.h"
#include "loom/postgres/postgres_blob_ledger.h"
#include "support/postgres_server.h"
#include "support/temp_dir.h"

namespace loom::compliance::conformance {
namespace {

namespace fs = std::filesystem;
using loom::testing::TempDir;
using Addresses = std::set<std::string, std::less<>>;

struct BlobLedgerFactory {
  std::string name;
  std::function<std::unique_ptr<BlobLedger>(const fs::path& dir)> open;
  std::function<std::string()> unavailable;
};

void PrintTo(const BlobLedgerFactory& f, std::ostream* os) { *os << f.name; }

class BlobLedgerConformance : public ::testing::TestWithParam<BlobLedgerFactory> {
 protected:
  void SetUp() override {
    if (GetParam().unavailable) {
      std::string why = GetParam().unavailable();
      if (!why.empty()) GTEST_SKIP() << why;
    }
    ledger_ = GetParam().open(dir_.path());
  }
  BlobLedger& ledger() { return *ledger_; }
  std::unique_ptr<BlobLedger> another() { return GetParam().open(dir_.path()); }

 private:
  TempDir dir_;
  std::unique_ptr<BlobLedger> ledger_;
};

const std::string kA(64, 'a');
const std::string kB(64, 'b');
const std::string kC(64, 'c');

TEST_P(BlobLedgerConformance, RecordsWhoPutWhatIdempotently) {
  ledger().add("alice", kA);
  ledger().add("alice", kA);
  ledger().add("alice", kB);
  ledger().add("bob", kB);
  ledger().add(std::nullopt, kC);  // a run without a subject
  EXPECT_EQ((Addresses{kA, kB}), ledger().addressesOf("alice"));
  EXPECT_EQ((Addresses{kB}), ledger().alsoPutByOthers("alice", {kA, kB}));
  EXPECT_EQ((Addresses{kB, kC}), ledger().alsoPutByOthers("alice", {kA, kB, kC}));
  EXPECT_EQ((Addresses{kA, kB, kC}), ledger().alsoPutByOthers("bob", {kA, kB, kC}));
  EXPECT_EQ((Addresses{kB}), ledger().alsoPutByOthers("bob", {kB}));
  EXPECT_TRUE(ledger().alsoPutByOthers("bob", {}).empty());
  EXPECT_TRUE(ledger().alsoPutByOthers("alice", {std::string(64, 'd')}).empty());
  EXPECT_TRUE(ledger().addressesOf("carol").empty());
}

// An erasure asks about its subject's blobs only: among many rows of others, it finds exactly
// the ones that share an address with them.
TEST_P(BlobLedgerConformance, OnlyTheAddressesAskedAboutAreAnswered) {
  for (int i = 0; i < 500; ++i) {
    std::string address = std::to_string(i);
    address.insert(0, 64 - address.size(), '0');
    ledger().add("tenant-" + std::to_string(i % 7), address);
  }
  ledger().add("alice", kA);
  ledger().add("bob", kA);
  std::string shared(64, '0');
  shared.back() = '7';  // tenant-0's address 7
  ledger().add("alice", shared);
  EXPECT_EQ((Addresses{kA, shared}), ledger().alsoPutByOthers("alice", {kA, shared}));
  EXPECT_EQ((Addresses{kA}), ledger().alsoPutByOthers("alice", {kA}));
}

TEST_P(BlobLedgerConformance, AnotherProcessSeesEveryPutAtOnce) {
  auto other = another();
  ledger().add("alice", kA);
  EXPECT_EQ((Addresses{kA}), other->addressesOf("alice"));
  EXPECT_EQ((Addresses{kA}), other->alsoPutByOthers("bob", {kA}));
}

// Puts by an erased subject before its shred protect nothing any more; later ones do.
TEST_P(BlobLedgerConformance, PutsOfAShreddedSubjectBeforeItsShredProtectNothing) {
  ledger().add("bob", kB);
  std::map<std::string, int64_t, std::less<>> shredded{{"bob", INT64_MAX - 1}};
  EXPECT_TRUE(ledger().alsoPutByOthers("alice", {kB}, shredded).empty());
  shredded["bob"] = 0;  // shredded before the put: the put is new data, it protects its blob
  EXPECT_EQ((Addresses{kB}), ledger().alsoPutByOthers("alice", {kB}, shredded));
}

TEST_P(BlobLedgerConformance, ForgetRemovesOnlyThatSubjectsRows) {
  ledger().add("alice", kA);
  ledger().add("alice", kB);
  ledger().add("bob", kA);
  ledger().forget("alice", {kA, kB});
  EXPECT_TRUE(ledger().addressesOf("alice").empty());
  EXPECT_EQ((Addresses{kA}), ledger().addressesOf("bob"));
}

BlobLedgerFactory sqlite() {
  return {
      "Sqlite",
      [](const fs::path& dir) { return std::make_unique<BlobLedger>((dir / "loom.db").string()); },
      {}};
}

BlobLedgerFactory postgresRows() {
  return {
      "Postgres",
      [](const fs::path& dir) {
        postgres::PostgresOptions o{loom::testing::testPostgresUrl(),
                                    loom::testing::testSchemaFor(dir)};
        postgres::migrate(o);
        return std::make_unique<BlobLedger>(std::make_unique<postgres::PostgresBlobLedgerRows>(o));
      },
      &loom::testing::postgresUnavailable};
}

INSTANTIATE_TEST_SUITE_P(Stores, BlobLedgerConformance, ::testing::Values(sqlite(), postgresRows()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace loom::compliance::conformance
