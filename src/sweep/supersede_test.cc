// Superseding a damaged archive segment: only when every run it lists is whole elsewhere (a
// newer segment or its live log, the same events), journaled, and then left out by every
// reader; the copies it relied on become segments retention requires.
#include "loom/sweep/supersede.h"

#include <gtest/gtest.h>

#include "archive_test_util.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/sweep/retention.h"
#include "loom/util/error.h"

namespace loom::sweep {
namespace {

using namespace testutil;

constexpr int64_t kDay = 24LL * 3600 * 1000;

class SupersedeTest : public ::testing::Test {
 protected:
  SupersedeTest() : archiveDir_(scratch_.path() / "archive") {
    auto out = [](int i) { return json::object{{"i", i}}; };
    writeExecution(store_, "a", kT0, "completed", kT0 + kDay, 3, out);
    writeExecution(store_, "b", kT0, "failed", kT0 + kDay, 2, out);
  }

  // A segment holding the live logs of a and b (as a retention run killed before its removes
  // leaves it), `b` changed when `differentB`; the first block damaged when `damaged`.
  std::string writeSegment(bool damaged, bool differentB = false) {
    ArchiveWriter writer(folderArchiveStore(archiveDir_), ArchiveWriterOptions{clock_, 3});
    for (const char* id : {"a", "b"}) {
      std::vector<kernel::Event> events = store_.read(id);
      if (differentB && std::string(id) == "b") events[1].data["output"] = "not the live output";
      writer.add(*store_.info(id), events);
    }
    std::string name = writer.finish();
    clock_->advance(1000);  // the next segment is newer
    if (damaged) {
      std::string bytes = readFile(archiveDir_ / name);
      bytes[40] = static_cast<char>(bytes[40] ^ 0x5a);  // past the header: a's block
      writeFile(archiveDir_ / name, bytes);
    }
    return name;
  }

  RetentionReport retain() {
    RetentionOptions o;
    o.afterMillis = 0;
    o.clock = clock_;
    return runRetention(store_, nullptr, folderArchiveStore(archiveDir_), o);
  }

  SupersedeReport supersede(const std::string& name, bool dryRun = false) {
    return supersedeSegment(store_, folderArchiveStore(archiveDir_), name, {dryRun, clock_});
  }

  int64_t controlEvents() { return static_cast<int64_t>(store_.readControl(1).size()); }

  TempDir scratch_;
  fs::path archiveDir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kT0 + 100 * kDay);
  kernel::MemoryEventStore store_;
};

TEST_F(SupersedeTest, ASegmentArchivedAnewIsSupersededAndEveryReaderLeavesItOut) {
  std::string damaged = writeSegment(true);
  RetentionReport r = retain();  // archives a and b anew, then removes them
  ASSERT_EQ(r.rearchived, 2);
  ASSERT_EQ(r.removed, 2);
  EXPECT_THROW(Archive(archiveDir_).forEachEvent([](auto&, auto&) {}), DataLossError);

  int64_t before = controlEvents();
  SupersedeReport dry = supersede(damaged, true);
  EXPECT_EQ(dry.damaged, std::vector<std::string>{"a"});
  EXPECT_EQ(dry.heldIn, std::set<std::string>{r.segmentName});
  EXPECT_EQ(dry.liveCopies, 0);
  EXPECT_EQ(controlEvents(), before) << "a dry run journals nothing";
  EXPECT_TRUE(supersededSegments(store_).empty());

  SupersedeReport done = supersede(damaged);
  EXPECT_EQ(done.executions, 2);
  EXPECT_NE(describe(done).find("marked superseded"), std::string::npos) << describe(done);
  EXPECT_NE(done.damage.find("checksum mismatch"), std::string::npos) << done.damage;
  EXPECT_EQ(supersededSegments(store_), std::set<std::string>{damaged});
  kernel::ControlEvent mark = store_.readControl(1).back();
  EXPECT_EQ(mark.type, "RETENTION_SUPERSEDED");
  EXPECT_EQ(json::value(mark.data.at("heldIn")), json::array{r.segmentName});

  Archive readable = readableArchive(folderArchiveStore(archiveDir_), store_);
  EXPECT_EQ(readable.segmentNames(), std::vector<std::string>{r.segmentName});
  int64_t events = 0;
  EXPECT_NO_THROW(readable.forEachEvent([&](auto&, auto&) { ++events; }));
  EXPECT_EQ(events, 5 + 4);  // a: started, 3 steps, ended; b: started, 2 steps, ended
  EXPECT_TRUE(supersede(damaged).alreadySuperseded);
  EXPECT_EQ(controlEvents(), before + 1) << "a repeat journals nothing";

  // The damaged file may go; the copies it relied on may not.
  fs::rename(archiveDir_ / damaged, scratch_.path() / damaged);
  EXPECT_NO_THROW(requireJournaledSegments(store_, readable));
  fs::rename(archiveDir_ / r.segmentName, scratch_.path() / r.segmentName);
  try {
    requireJournaledSegments(store_, readable);
    FAIL() << "the segment holding the only copies went unnoticed";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find(r.segmentName), std::string::npos) << e.what();
  }
}

TEST_F(SupersedeTest, LiveLogsAreWholeCopiesAndTheNextRetentionArchivesThemAnew) {
  std::string damaged = writeSegment(true);  // a killed run's segment: the logs are still live
  SupersedeReport done = supersede(damaged);
  EXPECT_EQ(done.liveCopies, 2);
  EXPECT_TRUE(done.heldIn.empty());
  RetentionReport r = retain();
  EXPECT_EQ(r.alreadyArchived, 0) << "the superseded segment was taken for a copy";
  EXPECT_EQ(r.archived, 2);
  EXPECT_TRUE(r.damagedSegments.empty());
  auto copy = readableArchive(folderArchiveStore(archiveDir_), store_).find("a");
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(static_cast<int64_t>(copy->events.size()), copy->info.nextSeq - 1);
}

TEST_F(SupersedeTest, ARunWhoseOnlyCopyIsInTheSegmentKeepsItAndNothingIsJournaled) {
  std::string damaged = writeSegment(true);
  ASSERT_TRUE(store_.remove("a"));  // its only copy is the damaged block
  int64_t before = controlEvents();
  try {
    supersede(damaged);
    FAIL() << "the only copy of a was retired";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("1 of its 2 runs have no whole copy"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("restore it from a backup"), std::string::npos);
  }
  EXPECT_EQ(controlEvents(), before);
  EXPECT_TRUE(supersededSegments(store_).empty());
}

TEST_F(SupersedeTest, ACopyWithOtherEventsThanTheSegmentsReadableBlockIsNoCopy) {
  std::string damaged = writeSegment(true, /*differentB=*/true);
  EXPECT_THROW(supersede(damaged), FailedPreconditionError) << "b's live log is not its copy";
}

TEST_F(SupersedeTest, AWholeSegmentAnUnknownOneAndADamagedIndexAreRefused) {
  std::string whole = writeSegment(false);
  EXPECT_THROW(supersede(whole), FailedPreconditionError);
  EXPECT_THROW(supersede("segment-nope.lseg"), NotFoundError);
  std::string bytes = readFile(archiveDir_ / whole);
  bytes[bytes.size() - 20] = static_cast<char>(bytes[bytes.size() - 20] ^ 0x5a);  // the footer
  writeFile(archiveDir_ / whole, bytes);
  try {
    supersede(whole);
    FAIL() << "a segment whose runs are unknowable was retired";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("which runs it holds is unknown"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(supersededSegments(store_).empty());
}

TEST_F(SupersedeTest, ADamagedBlocksErrorNamesBothWaysOut) {
  std::string damaged = writeSegment(true);
  try {
    Archive(archiveDir_).openSegment(damaged).read("a");
    FAIL();
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("loom retention supersede " + damaged), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace loom::sweep
