// Archive segments: round trips (many executions, unicode, large outputs, none at all), every
// way a segment file can be damaged (truncated anywhere, a flipped byte in a block, the index or
// the header, wrong magic, a newer format) as typed errors naming the file, the writer's
// refusals and its temp file, and the folder-level Archive.
#include "loom/sweep/archive.h"

#include <gtest/gtest.h>

#include <set>

#include "archive_format.h"
#include "archive_test_util.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/util/error.h"
#include "sweep/content_walker.h"

namespace loom::sweep {
namespace {

using namespace testutil;

std::string hexAddress(int i) {
  std::string a(64, '0');
  std::string n = std::to_string(i);
  a.replace(64 - n.size(), n.size(), n);
  return a;
}

class ArchiveTest : public ::testing::Test {
 protected:
  ArchiveTest() : archiveDir_(scratch_.path() / "archive") {}

  // Writes executions e000..e(n-1) into the store; odd ones carry unicode, every tenth a
  // large output, and each cites content addresses in its outputs.
  void fill(int n) {
    for (int i = 0; i < n; ++i) {
      char id[16];
      std::snprintf(id, sizeof id, "e%03d", i);
      writeExecution(
          store_, id, kT0 + i, i % 3 == 0 ? "failed" : "completed", kT0 + 1000 + i, 1 + i % 4,
          [&](int s) -> json::value {
            json::object o{{"ref", json::object{{"__loomContent", hexAddress(i * 10 + s)}}}};
            if (i % 2 == 1) o["text"] = "naïve café ✓ 日本語 🧵 line\nbreak \"quoted\"";
            if (i % 10 == 0 && s == 0) o["big"] = std::string(1 << 20, 'z');
            return o;
          });
    }
  }

  fs::path writeSegment() {
    ArchiveWriter writer(archiveDir_, {clock_});
    for (const auto& info : store_.list({})) {
      writer.add(info, [&](const auto& sink) { store_.scan(info.id, 1, sink); });
    }
    return archiveDir_ / writer.finish();
  }

  template <typename E>
  void expectErrorNaming(const std::function<void()>& call, const fs::path& file,
                         const std::string& what) {
    try {
      call();
      ADD_FAILURE() << "no error for " << what;
    } catch (const E& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(file.string()), std::string::npos) << m;
      EXPECT_NE(m.find(what), std::string::npos) << m;
    } catch (const Error& e) {
      ADD_FAILURE() << "wrong error type for " << what << ": " << e.what();
    }
  }

  TempDir scratch_;
  fs::path archiveDir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kT0 + 5000);
  kernel::MemoryEventStore store_;
};

TEST_F(ArchiveTest, ManyExecutionsRoundTripExactly) {
  fill(60);
  fs::path path = writeSegment();
  EXPECT_EQ(path.parent_path(), archiveDir_);
  EXPECT_EQ(path.extension(), kSegmentExtension);
  EXPECT_EQ(filesIn(archiveDir_), std::vector<fs::path>{path});  // no temp file left
  auto infos = store_.list({});

  ArchiveSegment segment = ArchiveSegment::open(path);
  EXPECT_EQ(segment.formatVersion(), kArchiveFormatVersion);
  EXPECT_EQ(segment.createdAtMillis(), kT0 + 5000);
  EXPECT_LT(segment.fileBytes(), 1 << 20);  // the 6 MiB of repeated bytes compress
  auto listed = segment.listExecutions();
  ASSERT_EQ(listed.size(), infos.size());
  for (std::size_t i = 0; i < infos.size(); ++i) {
    EXPECT_EQ(json::toText(format::infoToJson(listed[i])),
              json::toText(format::infoToJson(infos[i])));
    auto archived = segment.read(infos[i].id);
    ASSERT_TRUE(archived.has_value());
    auto live = store_.read(infos[i].id);
    ASSERT_EQ(archived->events.size(), live.size());
    for (std::size_t k = 0; k < live.size(); ++k) {
      EXPECT_EQ(kernel::toText(archived->events[k]), kernel::toText(live[k]));
    }
  }
  EXPECT_FALSE(segment.read("nobody").has_value());
  int64_t events = 0;
  segment.forEachEvent([&](const std::string& id, const kernel::Event& e) {
    EXPECT_TRUE(segment.contains(id));
    EXPECT_GE(e.seq, 1);
    ++events;
  });
  int64_t expected = 0;
  for (const auto& info : infos) expected += info.nextSeq - 1;
  EXPECT_EQ(events, expected);
}

TEST_F(ArchiveTest, ArchivedEventsCiteTheSameContentAddresses) {
  fill(25);
  std::multiset<std::string> live, archived;
  for (const auto& info : store_.list({})) {
    store_.scan(info.id, 1, [&](const kernel::Event& e) {
      visitCitedAddresses(e, [&](std::string_view a) { live.insert(std::string(a)); });
    });
  }
  writeSegment();
  Archive(archiveDir_).forEachEvent([&](const std::string&, const kernel::Event& e) {
    visitCitedAddresses(e, [&](std::string_view a) { archived.insert(std::string(a)); });
  });
  EXPECT_FALSE(live.empty());
  EXPECT_EQ(archived, live);
}

TEST_F(ArchiveTest, AnEmptySegmentIsValid) {
  ArchiveWriter writer(archiveDir_, {clock_});
  ArchiveSegment segment = ArchiveSegment::open(archiveDir_ / writer.finish());
  EXPECT_TRUE(segment.listExecutions().empty());
  EXPECT_EQ(segment.fileBytes(), static_cast<int64_t>(format::kHeaderBytes + format::kFooterBytes));
}

TEST_F(ArchiveTest, ATruncatedSegmentIsDataLossNamingTheFile) {
  fill(5);
  fs::path path = writeSegment();
  std::string bytes = readFile(path);
  auto size = bytes.size();
  for (std::size_t keep : {std::size_t{0}, std::size_t{5}, std::size_t{31}, std::size_t{60},
                           size / 2, size - format::kFooterBytes - 1, size - 1}) {
    writeFile(path, bytes.substr(0, keep));
    try {
      ArchiveSegment::open(path);
      ADD_FAILURE() << "a segment cut to " << keep << " of " << size << " bytes opened";
    } catch (const DataLossError& e) {
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  }
}

TEST_F(ArchiveTest, AFlippedByteInABlockIsDataLossOnRead) {
  fill(5);
  fs::path path = writeSegment();
  ArchiveSegment clean = ArchiveSegment::open(path);
  auto infos = clean.listExecutions();
  std::string bytes = readFile(path);
  bytes[format::kHeaderBytes + 3] ^= 0x20;  // inside the first block (e000's)
  writeFile(path, bytes);
  ArchiveSegment segment = ArchiveSegment::open(path);  // header and index are intact
  expectErrorNaming<DataLossError>([&] { segment.read("e000"); }, path,
                                   "block of execution 'e000' at offset 32: checksum mismatch");
  expectErrorNaming<DataLossError>(
      [&] { segment.forEachEvent([](const std::string&, const kernel::Event&) {}); }, path,
      "checksum mismatch");
  EXPECT_TRUE(segment.read("e001").has_value());  // other blocks still read
}

TEST_F(ArchiveTest, AFlippedByteInTheIndexOrHeaderIsDataLossOnOpen) {
  fill(3);
  fs::path path = writeSegment();
  std::string bytes = readFile(path);
  uint64_t indexOffset = format::getU64(bytes.data() + bytes.size() - format::kFooterBytes);
  for (std::size_t at : {static_cast<std::size_t>(indexOffset + 10), std::size_t{17}}) {
    std::string damaged = bytes;
    damaged[at] ^= 0x01;
    writeFile(path, damaged);
    expectErrorNaming<DataLossError>([&] { ArchiveSegment::open(path); }, path, "checksum");
  }
}

TEST_F(ArchiveTest, WrongMagicIsDataLossAndANewerVersionIsFailedPrecondition) {
  fill(2);
  fs::path path = writeSegment();
  std::string bytes = readFile(path);
  std::string wrong = bytes;
  wrong[0] = 'X';
  writeFile(path, wrong);
  expectErrorNaming<DataLossError>([&] { ArchiveSegment::open(path); }, path, "wrong magic");
  writeFile(path, "just some text, long enough to be read as a header and more than that....");
  expectErrorNaming<DataLossError>([&] { ArchiveSegment::open(path); }, path, "wrong magic");

  std::string newer = bytes;
  format::putU32(newer.data() + 8, kArchiveFormatVersion + 1);
  writeFile(path, newer);
  expectErrorNaming<FailedPreconditionError>([&] { ArchiveSegment::open(path); }, path,
                                             "upgrade Loom");
  EXPECT_THROW(ArchiveSegment::open(archiveDir_ / "missing.lseg"), NotFoundError);
}

TEST_F(ArchiveTest, ABadRowInsideAnIntactBlockIsCorruptEventError) {
  kernel::ExecutionInfo info;
  info.id = "odd";
  info.nextSeq = 2;
  kernel::Event bad{1, kernel::EventType::kStepCompleted, kT0, json::object{}};  // no stepId
  ArchiveWriter writer(archiveDir_, {clock_});
  writer.add(info, std::vector<kernel::Event>{bad});
  ArchiveSegment segment = ArchiveSegment::open(archiveDir_ / writer.finish());
  try {
    segment.read("odd");
    ADD_FAILURE() << "a bad row was read";
  } catch (const CorruptEventError& e) {
    EXPECT_EQ(e.executionId(), "odd");
    EXPECT_EQ(e.seq(), 1);
  }
}

TEST_F(ArchiveTest, TheWriterRefusesIncompleteLogsAndLeavesNoFileBehind) {
  fill(2);
  auto infos = store_.list({});
  {
    ArchiveWriter writer(archiveDir_, {clock_});
    EXPECT_EQ(filesIn(archiveDir_).size(), 1u);  // the temp file
    EXPECT_TRUE(Archive(archiveDir_).segmentNames().empty());
    writer.add(infos[0], store_.read(infos[0].id));
    EXPECT_THROW(writer.add(infos[0], store_.read(infos[0].id)), InvalidArgumentError);
    auto events = store_.read(infos[1].id);
    events.pop_back();  // one event short of what the metadata counts
    EXPECT_THROW(writer.add(infos[1], events), InvalidArgumentError);
    EXPECT_THROW(writer.finish(), FailedPreconditionError);
  }
  EXPECT_TRUE(filesIn(archiveDir_).empty());
  {
    ArchiveWriter writer(archiveDir_, {clock_});
    auto events = store_.read(infos[1].id);
    std::swap(events[0], events[1]);
    EXPECT_THROW(writer.add(infos[1], events), InvalidArgumentError);
  }
  {
    ArchiveWriter writer(archiveDir_, {clock_});
    EXPECT_THROW(
        writer.add(infos[0], [](const auto&) { throw UnavailableError("injected: store died"); }),
        UnavailableError);
  }
  EXPECT_TRUE(filesIn(archiveDir_).empty());
}

TEST_F(ArchiveTest, TheArchiveReadsEverySegmentOfItsFolderAndIgnoresOtherFiles) {
  EXPECT_TRUE(Archive(scratch_.path() / "nowhere").segmentNames().empty());
  fill(4);
  fs::path first = writeSegment();
  clock_->advance(1000);
  fs::path second = writeSegment();  // the same executions again, as after an interrupted run
  writeFile(archiveDir_ / ".segment-leftover.tmp", "half a segment");
  writeFile(archiveDir_ / "notes.txt", "not a segment");
  Archive archive(archiveDir_);
  EXPECT_EQ(archive.segmentNames(),
            (std::vector<std::string>{first.filename().string(), second.filename().string()}));
  int segments = 0;
  archive.forEachSegment([&](const ArchiveSegment& s) {
    ++segments;
    EXPECT_EQ(s.listExecutions().size(), 4u);
  });
  EXPECT_EQ(segments, 2);
  auto found = archive.find("e002");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->info.id, "e002");
  EXPECT_EQ(found->events.size(), store_.read("e002").size());
  EXPECT_FALSE(archive.find("nobody").has_value());
  std::map<std::string, int> eventsById;
  archive.forEachEvent([&](const std::string& id, const kernel::Event&) { ++eventsById[id]; });
  EXPECT_EQ(eventsById["e002"], 2 * static_cast<int>(store_.read("e002").size()));

  writeFile(archiveDir_ / "notes.v2.lseg", readFile(first));  // a segment someone renamed
  EXPECT_THROW(archive.segmentNames(), DataLossError) << "skipping it could let a sweep delete "
                                                         "what it cites";
  fs::remove(archiveDir_ / "notes.v2.lseg");

  std::string bytes = readFile(second);
  writeFile(second, bytes.substr(0, bytes.size() - 3));
  expectErrorNaming<DataLossError>([&] { archive.forEachSegment([](const ArchiveSegment&) {}); },
                                   second, "truncated");
}

}  // namespace
}  // namespace loom::sweep
