// The ArchiveStore conformance suite: the contract of include/loom/sweep/archive_store.h as
// tests every implementation passes (the folder of the embedded home, the PostgreSQL tables),
// instantiated once per implementation at the bottom.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "loom/kernel/event_store.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/postgres/postgres_archive_store.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/archive_store.h"
#include "loom/util/error.h"
#include "postgres/pg_connection.h"
#include "support/postgres_server.h"
#include "support/temp_dir.h"
#include "sweep/archive_test_util.h"

namespace loom::sweep::archive_conformance {
namespace {

namespace fs = std::filesystem;
using loom::testing::TempDir;
using ::testing::HasSubstr;

struct ArchiveStoreFactory {
  std::string name;
  // A store over `dir` (the home folder); a second call over the same `dir` is the same store
  // seen by another process.
  std::function<std::shared_ptr<ArchiveStore>(const fs::path& dir)> make;
  // Damages segment `name` as a disk or an operator could: loses part of its bytes.
  std::function<void(const fs::path& dir, const std::string& name)> damage;
  // Why the implementation cannot run here (no server); "" or unset: it can.
  std::function<std::string()> unavailable;
};

void PrintTo(const ArchiveStoreFactory& f, std::ostream* os) { *os << f.name; }

std::string randomBytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(rng());
  return out;
}

class ArchiveStoreConformance : public ::testing::TestWithParam<ArchiveStoreFactory> {
 protected:
  void SetUp() override {
    if (GetParam().unavailable) {
      std::string why = GetParam().unavailable();
      if (!why.empty()) GTEST_SKIP() << why;
    }
    store_ = GetParam().make(scratch_.path());
  }

  ArchiveStore& store() { return *store_; }

  // Stages `bytes` as a writer would and publishes them as `name`.
  void publish(const std::string& name, const std::string& bytes) {
    fs::create_directories(store().stagingDir());
    fs::path staged = store().stagingDir() / ("." + name + ".test.tmp");
    std::ofstream(staged, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    store().publish(staged, name);
    EXPECT_FALSE(fs::exists(staged)) << "publish left the staged file";
  }

  std::string readAll(const std::string& name) {
    auto bytes = store().open(name);
    return bytes->read(0, static_cast<std::size_t>(bytes->size()), "the whole segment");
  }

  // Three executions of a few events each, written by an ArchiveWriter into the store.
  std::string writeSegment(kernel::EventStore& events) {
    ArchiveWriter writer(store_, {});
    for (const auto& info : events.list({})) {
      writer.add(info, [&](const auto& sink) { events.scan(info.id, 1, sink); });
    }
    return writer.finish();
  }

  TempDir scratch_;  // declared first: outlives the store
  std::shared_ptr<ArchiveStore> store_;
};

TEST_P(ArchiveStoreConformance, PublishedSegmentsAreListedInNameOrderAndReadBackExactly) {
  EXPECT_TRUE(store().segmentNames().empty());
  // 2.5 MiB: the PostgreSQL store keeps 1 MiB chunks, so reads cross chunk boundaries.
  std::string big = randomBytes((5u << 20) / 2, 1);
  std::string small = randomBytes(100, 2);
  publish("segment-20261204T100000000Z-bbbbbbbb.lseg", big);
  publish("segment-20261203T100000000Z-aaaaaaaa.lseg", small);
  EXPECT_EQ(store().segmentNames(),
            (std::vector<std::string>{"segment-20261203T100000000Z-aaaaaaaa.lseg",
                                      "segment-20261204T100000000Z-bbbbbbbb.lseg"}));
  auto bytes = store().open("segment-20261204T100000000Z-bbbbbbbb.lseg");
  EXPECT_EQ(bytes->size(), static_cast<int64_t>(big.size()));
  for (auto [offset, n] :
       std::vector<std::pair<int64_t, std::size_t>>{{0, 32},
                                                    {(1 << 20) - 5, 10},
                                                    {100, (2u << 20)},
                                                    {0, big.size()},
                                                    {static_cast<int64_t>(big.size()) - 56, 56},
                                                    {7, 0}}) {
    EXPECT_EQ(bytes->read(offset, n, "a range"), big.substr(static_cast<std::size_t>(offset), n))
        << offset << " + " << n;
  }
  EXPECT_EQ(readAll("segment-20261203T100000000Z-aaaaaaaa.lseg"), small);
  // Another process's store over the same place sees the same segments.
  auto other = GetParam().make(scratch_.path());
  EXPECT_EQ(other->segmentNames(), store().segmentNames());
}

TEST_P(ArchiveStoreConformance, AReadPastTheEndIsDataLossNamingTheSegment) {
  publish("segment-1.lseg", randomBytes(1000, 3));
  auto bytes = store().open("segment-1.lseg");
  try {
    bytes->read(990, 20, "the footer");
    FAIL() << "a read past the end returned";
  } catch (const DataLossError& e) {
    EXPECT_THAT(e.what(), HasSubstr("segment-1.lseg"));
    EXPECT_THAT(e.what(), HasSubstr("the footer"));
  }
}

TEST_P(ArchiveStoreConformance, AMissingSegmentIsNotFound) {
  EXPECT_THROW(store().open("segment-nowhere.lseg"), NotFoundError);
}

TEST_P(ArchiveStoreConformance, APublishedNameIsNeverReplaced) {
  std::string first = randomBytes(5000, 4);
  publish("segment-1.lseg", first);
  fs::path staged = store().stagingDir() / ".segment-1.again.tmp";
  std::ofstream(staged, std::ios::binary) << "other bytes";
  EXPECT_THROW(store().publish(staged, "segment-1.lseg"), AlreadyExistsError);
  EXPECT_EQ(readAll("segment-1.lseg"), first);
  EXPECT_EQ(store().segmentNames(), std::vector<std::string>{"segment-1.lseg"});
}

TEST_P(ArchiveStoreConformance, NamesThatCannotBeSegmentsAreRefused) {
  fs::create_directories(store().stagingDir());
  fs::path staged = store().stagingDir() / ".x.tmp";
  for (const std::string name :
       {"", "../escape.lseg", ".hidden.lseg", "segment.txt", "a/b.lseg", "-x.lseg", ".lseg"}) {
    std::ofstream(staged, std::ios::binary) << "bytes";
    EXPECT_THROW(store().publish(staged, name), InvalidArgumentError) << name;
    EXPECT_THROW(store().open(name), InvalidArgumentError) << name;
  }
  EXPECT_TRUE(store().segmentNames().empty());
}

TEST_P(ArchiveStoreConformance, AWriterPublishesWholeSegmentsOnly) {
  kernel::MemoryEventStore events;
  for (const char* id : {"a", "b", "c"}) {
    testutil::writeExecution(events, id, testutil::kT0, "completed", testutil::kT0 + 10, 2,
                             [](int i) {
                               return json::object{{"n", i}};
                             });
  }
  {
    ArchiveWriter unfinished(store_, {});
    unfinished.add(*events.info("a"), [&](const auto& sink) { events.scan("a", 1, sink); });
    EXPECT_TRUE(store().segmentNames().empty()) << "an unfinished segment is visible";
  }
  std::string name = writeSegment(events);
  EXPECT_EQ(store().segmentNames(), std::vector<std::string>{name});
  for (const auto& entry : fs::directory_iterator(store().stagingDir())) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(".")) << "left " << entry.path();
  }
  Archive archive(store_);
  auto copy = archive.find("b");
  ASSERT_TRUE(copy.has_value());
  ASSERT_EQ(copy->events.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(kernel::toText(copy->events[i]), kernel::toText(events.read("b")[i]));
  }
  EXPECT_THAT(archive.openSegment(name).location(), HasSubstr(name));
}

TEST_P(ArchiveStoreConformance, ConcurrentPublishersEachLand) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        std::string name = "segment-" + std::to_string(t) + "-" + std::to_string(i) + ".lseg";
        fs::path staged = store().stagingDir() / ("." + name + ".tmp");
        fs::create_directories(store().stagingDir());
        std::ofstream(staged, std::ios::binary) << name;
        store().publish(staged, name);
      }
    });
  }
  for (auto& t : threads) t.join();
  auto names = store().segmentNames();
  ASSERT_EQ(names.size(), 20u);
  for (const auto& name : names) EXPECT_EQ(readAll(name), name);
}

TEST_P(ArchiveStoreConformance, ADamagedSegmentFailsClosedNamingIt) {
  kernel::MemoryEventStore events;
  testutil::writeExecution(events, "a", testutil::kT0, "completed", testutil::kT0 + 10, 3,
                           [](int i) { return json::value(i); });
  std::string name = writeSegment(events);
  GetParam().damage(scratch_.path(), name);
  try {
    Archive(store_).forEachSegment(
        [](const ArchiveSegment& s) { s.forEachExecution([](const ArchivedExecution&) {}); });
    FAIL() << "a damaged segment was read";
  } catch (const DataLossError& e) {
    EXPECT_THAT(e.what(), HasSubstr(name));
  }
}

ArchiveStoreFactory folder() {
  return {"Folder", [](const fs::path& dir) { return folderArchiveStore(dir / "archive"); },
          [](const fs::path& dir, const std::string& name) {
            fs::resize_file(dir / "archive" / name, fs::file_size(dir / "archive" / name) - 3);
          }};
}

postgres::PostgresOptions postgresOptions(const fs::path& dir) {
  return {loom::testing::testPostgresUrl(), loom::testing::testSchemaFor(dir)};
}

ArchiveStoreFactory postgresStore() {
  return {"Postgres",
          [](const fs::path& dir) -> std::shared_ptr<ArchiveStore> {
            postgres::migrate(postgresOptions(dir));
            return std::make_shared<postgres::PostgresArchiveStore>(postgresOptions(dir),
                                                                    dir / "archive");
          },
          [](const fs::path& dir, const std::string& name) {
            auto options = postgresOptions(dir);
            postgres::Connection(options.url, options.schema)
                .execDynamic("DELETE FROM archive_chunks WHERE segment = $1 AND chunk = 0",
                             {postgres::Param::text(name)}, "damage");
          },
          &loom::testing::postgresUnavailable};
}

INSTANTIATE_TEST_SUITE_P(Stores, ArchiveStoreConformance,
                         ::testing::Values(folder(), postgresStore()),
                         [](const auto& info) { return info.param.name; });

// PostgreSQL only: a chunk of the wrong length (a row rewritten behind Loom's back) is damage.
TEST(PostgresArchiveStoreTest, AChunkOfTheWrongLengthIsDataLoss) {
  LOOM_SKIP_WITHOUT_POSTGRES();
  TempDir scratch;
  auto options = postgresOptions(scratch.path());
  postgres::migrate(options);
  postgres::PostgresArchiveStore store(options, scratch.path() / "archive");
  fs::create_directories(store.stagingDir());
  std::string bytes = randomBytes((3u << 20) / 2, 6);
  fs::path staged = store.stagingDir() / ".s.tmp";
  std::ofstream(staged, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  store.publish(staged, "segment-1.lseg");
  postgres::Connection(options.url, options.schema)
      .execDynamic(
          "UPDATE archive_chunks SET bytes = substring(bytes from 1 for 10) "
          "WHERE segment = 'segment-1.lseg' AND chunk = 1",
          {}, "damage");
  auto segment = store.open("segment-1.lseg");
  EXPECT_EQ(segment->read(0, 100, "the start"), bytes.substr(0, 100));
  try {
    segment->read((1 << 20) + 5, 10, "a block");
    FAIL() << "a short chunk was read";
  } catch (const DataLossError& e) {
    EXPECT_THAT(e.what(), HasSubstr("segment-1.lseg"));
    EXPECT_THAT(e.what(), HasSubstr("chunk 1"));
  }
}

}  // namespace
}  // namespace loom::sweep::archive_conformance
