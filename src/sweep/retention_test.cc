// Retention: selects only executions that ended before the cutoff, archives then removes them
// (with their snapshots), records RETENTION_RUN, changes nothing in a dry run, and loses
// nothing when the store fails in the middle: every selected execution is live or archived.
#include "loom/sweep/retention.h"

#include <gtest/gtest.h>

#include <fstream>

#include <set>

#include "archive_test_util.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/memory_snapshot_store.h"
#include "loom/sweep/archive.h"
#include "loom/util/error.h"
#include "support/faulty_event_store.h"

namespace loom::sweep {
namespace {

using namespace testutil;

constexpr int64_t kDay = 24LL * 3600 * 1000;

// Fails the Nth scan or remove (counted from 1), as a store that dies mid-run.
class DyingStore : public loom::testing::FaultyEventStore {
 public:
  using FaultyEventStore::FaultyEventStore;
  void scan(const std::string& id, int64_t from,
            const std::function<void(const kernel::Event&)>& visit) const override {
    if (++scans_ == failScan) throw UnavailableError("injected: store died at scan of " + id);
    FaultyEventStore::scan(id, from, visit);
  }
  bool remove(const std::string& id) override {
    if (++removes_ == failRemove) throw UnavailableError("injected: store died removing " + id);
    return FaultyEventStore::remove(id);
  }
  int failScan = 0;
  int failRemove = 0;

 private:
  mutable int scans_ = 0;
  int removes_ = 0;
};

// An archive whose publish loses its answer: it lands (or not, with `lands` false) and then
// throws the UnavailableError of an unknown outcome, as a COMMIT on a lost connection does.
class LostAnswerArchive : public ArchiveStore {
 public:
  LostAnswerArchive(std::shared_ptr<ArchiveStore> inner, bool lands)
      : inner_(std::move(inner)), lands_(lands) {}
  std::string describe() const override { return inner_->describe(); }
  std::string locate(const std::string& name) const override { return inner_->locate(name); }
  std::vector<std::string> segmentNames() const override { return inner_->segmentNames(); }
  std::unique_ptr<SegmentBytes> open(const std::string& name) const override {
    return inner_->open(name);
  }
  std::filesystem::path stagingDir() const override { return inner_->stagingDir(); }
  void publish(const std::filesystem::path& staged, const std::string& name) override {
    if (lands_) inner_->publish(staged, name);
    throw UnavailableError("injected: the answer to the publish was lost; the outcome is unknown");
  }

 private:
  std::shared_ptr<ArchiveStore> inner_;
  bool lands_;
};

// An archive whose segments are damaged on their way to the disk: publish flips one byte of
// the first execution's block (past the 32-byte header) and keeps the index and its checksum.
class DamagingArchive : public LostAnswerArchive {
 public:
  explicit DamagingArchive(std::shared_ptr<ArchiveStore> inner)
      : LostAnswerArchive(inner, true), inner_(std::move(inner)) {}
  void publish(const std::filesystem::path& staged, const std::string& name) override {
    std::fstream f(staged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(40);
    char c = 0;
    f.get(c);
    f.seekp(40);
    f.put(static_cast<char>(c ^ 0x5a));
    f.close();
    inner_->publish(staged, name);
  }

 private:
  std::shared_ptr<ArchiveStore> inner_;
};

class RetentionTest : public ::testing::Test {
 protected:
  RetentionTest() : archiveDir_(scratch_.path() / "archive") {
    auto out = [](int i) { return json::object{{"i", i}, {"text", "ünïcode ✓"}}; };
    // now = kT0 + 100 days; retention after 30 days: cutoff = kT0 + 70 days.
    writeExecution(store_, "old-completed", kT0, "completed", kT0 + 10 * kDay, 3, out);
    writeExecution(store_, "old-failed", kT0, "failed", kT0 + 69 * kDay, 1, out);
    writeExecution(store_, "recent-completed", kT0, "completed", kT0 + 71 * kDay, 2, out);
    writeExecution(store_, "old-parked", kT0, "parked", kT0 + 1 * kDay, 2, out);
    writeExecution(store_, "old-running", kT0, "", 0, 4, out);
    for (const auto& id : {"old-completed", "old-parked"}) {
      snapshots_.put({id, 2, json::object{{"seq", 2}}});
    }
  }

  RetentionOptions options(bool archive = true, bool dryRun = false) {
    RetentionOptions o;
    o.afterDays = 30;
    o.archive = archive;
    o.dryRun = dryRun;
    o.clock = clock_;
    return o;
  }

  std::set<std::string> liveIds(const kernel::EventStore& store) {
    std::set<std::string> out;
    for (const auto& info : store.list({})) out.insert(info.id);
    return out;
  }

  TempDir scratch_;
  fs::path archiveDir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kT0 + 100 * kDay);
  kernel::MemoryEventStore store_;
  kernel::MemorySnapshotStore snapshots_;
};

TEST_F(RetentionTest, ArchivesThenRemovesOnlyEndedExecutionsPastTheCutoff) {
  std::map<std::string, std::vector<std::string>> before;
  for (const auto& id : {"old-completed", "old-failed"}) {
    for (const auto& e : store_.read(id)) before[id].push_back(kernel::toText(e));
  }
  int64_t bytes = store_.info("old-completed")->logBytes + store_.info("old-failed")->logBytes;

  RetentionReport r = runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), options());
  EXPECT_EQ(r.cutoffMillis, kT0 + 70 * kDay);
  EXPECT_EQ(r.scanned, 2);
  EXPECT_EQ(r.archived, 2);
  EXPECT_EQ(r.removed, 2);
  EXPECT_EQ(r.snapshotsRemoved, 1);
  EXPECT_EQ(r.bytesBefore, bytes);
  EXPECT_EQ(r.bytesAfter, static_cast<int64_t>(fs::file_size(r.segmentPath)));
  EXPECT_EQ(liveIds(store_),
            (std::set<std::string>{"recent-completed", "old-parked", "old-running"}));
  EXPECT_FALSE(snapshots_.latest("old-completed").has_value());
  EXPECT_TRUE(snapshots_.latest("old-parked").has_value());

  Archive archive(archiveDir_);
  ASSERT_EQ(archive.segmentNames(), std::vector<std::string>{r.segmentName});
  EXPECT_EQ(fs::path(r.segmentPath), archiveDir_ / r.segmentName);
  for (const auto& [id, texts] : before) {
    auto found = archive.find(id);
    ASSERT_TRUE(found.has_value()) << id;
    std::vector<std::string> archived;
    for (const auto& e : found->events) archived.push_back(kernel::toText(e));
    EXPECT_EQ(archived, texts);
  }

  // The segment is journaled before any log is removed, then the run's result.
  auto control = store_.readControl(1);
  ASSERT_EQ(control.size(), 2u);
  EXPECT_EQ(control[0].type, "RETENTION_ARCHIVED");
  EXPECT_EQ(control[0].data.at("segment").as_string(), r.segmentName);
  EXPECT_EQ(control[1].type, "RETENTION_RUN");
  EXPECT_EQ(control[1].data.at("archived").as_int64(), 2);
  EXPECT_EQ(control[1].data.at("removed").as_int64(), 2);
  EXPECT_EQ(control[1].data.at("cutoff").as_string(), formatTimestamp(kT0 + 70 * kDay));
  EXPECT_EQ(control[1].data.at("segment").as_string(), fs::path(r.segmentPath).filename().string());
  EXPECT_NE(describe(r).find("archived 2 into " + r.segmentPath), std::string::npos) << describe(r);
  EXPECT_EQ(toJson(r).at("removed").as_int64(), 2);

  // A second run finds nothing and records nothing.
  RetentionReport again =
      runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), options());
  EXPECT_EQ(again.scanned, 0);
  EXPECT_TRUE(again.segmentPath.empty());
  EXPECT_EQ(store_.readControl(1).size(), 2u);
  EXPECT_EQ(archive.segmentNames().size(), 1u);
}

TEST_F(RetentionTest, ADryRunChangesNothing) {
  auto live = liveIds(store_);
  RetentionReport r =
      runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), options(true, true));
  EXPECT_TRUE(r.dryRun);
  EXPECT_EQ(r.scanned, 2);
  EXPECT_EQ(r.archived, 0);
  EXPECT_EQ(r.removed, 0);
  EXPECT_TRUE(r.segmentPath.empty());
  EXPECT_EQ(liveIds(store_), live);
  EXPECT_TRUE(snapshots_.latest("old-completed").has_value());
  EXPECT_FALSE(fs::exists(archiveDir_));
  EXPECT_TRUE(store_.readControl(1).empty());
  EXPECT_NE(describe(r).find("dry run"), std::string::npos);
}

// The CLI's lock check before each remove: a lost lock stops the run before the next remove,
// the logs not removed yet stay live, and a second run finishes.
TEST_F(RetentionTest, ALostLockStopsTheRunBeforeTheNextRemove) {
  std::size_t live = liveIds(store_).size();
  RetentionOptions o = options(true, false);
  int checks = 0;
  o.beforeRemoving = [&checks] {
    if (++checks == 2) throw UnavailableError("the maintenance lock was lost");
  };
  EXPECT_THROW(runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), o),
               UnavailableError);
  EXPECT_EQ(liveIds(store_).size(), live - 1) << "one of the two selected logs was removed";
  RetentionReport again =
      runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), options(true, false));
  EXPECT_EQ(again.removed, 1);
  EXPECT_EQ(again.alreadyArchived, 1);
}

TEST_F(RetentionTest, WithoutArchiveTheLogsAreRemovedAndNoSegmentIsWritten) {
  RetentionReport r =
      runRetention(store_, nullptr, folderArchiveStore(archiveDir_), options(false));
  EXPECT_EQ(r.removed, 2);
  EXPECT_EQ(r.archived, 0);
  EXPECT_TRUE(r.segmentPath.empty());
  EXPECT_FALSE(fs::exists(archiveDir_));
  EXPECT_TRUE(store_.readControl(1)[0].data.at("segment").is_null());
}

TEST_F(RetentionTest, PagesThroughManyExecutions) {
  kernel::MemoryEventStore store;
  for (int i = 0; i < 23; ++i) {
    writeExecution(store, "e" + std::to_string(100 + i), kT0, "completed", kT0 + kDay, 1,
                   [](int) { return json::value("x"); });
  }
  RetentionOptions o = options();
  o.pageSize = 4;
  RetentionReport r = runRetention(store, nullptr, folderArchiveStore(archiveDir_), o);
  EXPECT_EQ(r.archived, 23);
  EXPECT_EQ(r.removed, 23);
  EXPECT_TRUE(store.list({}).empty());
  EXPECT_EQ(ArchiveSegment::open(r.segmentPath).listExecutions().size(), 23u);
}

TEST_F(RetentionTest, AFailureWhileArchivingRemovesNothingAndLeavesNoSegment) {
  DyingStore dying(store_);
  dying.failScan = 2;  // the second execution's log cannot be read
  auto live = liveIds(store_);
  EXPECT_THROW(runRetention(dying, &snapshots_, folderArchiveStore(archiveDir_), options()),
               UnavailableError);
  EXPECT_EQ(liveIds(store_), live);
  EXPECT_TRUE(snapshots_.latest("old-completed").has_value());
  EXPECT_TRUE(filesIn(archiveDir_).empty());  // not even a temp file
  EXPECT_TRUE(store_.readControl(1).empty());
}

TEST_F(RetentionTest, AFailureWhileRemovingLosesNothingAndARerunFinishes) {
  for (int i = 0; i < 6; ++i) {
    writeExecution(store_, "more-" + std::to_string(i), kT0, "completed", kT0 + kDay, 2,
                   [](int s) { return json::value(s); });
  }
  std::set<std::string> selected;
  for (const auto& info : store_.list({})) {
    if (info.endedAtMillis && *info.endedAtMillis < kT0 + 70 * kDay) selected.insert(info.id);
  }
  ASSERT_EQ(selected.size(), 8u);
  DyingStore dying(store_);
  dying.failRemove = 4;
  try {
    runRetention(dying, &snapshots_, folderArchiveStore(archiveDir_), options());
    FAIL() << "the injected failure did not surface";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("3 of 8 live logs removed"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("run retention again"), std::string::npos);
  }
  Archive archive(archiveDir_);
  auto live = liveIds(store_);
  for (const auto& id : selected) {
    EXPECT_TRUE(live.count(id) != 0 || archive.find(id).has_value()) << id << " was lost";
    EXPECT_TRUE(archive.find(id).has_value()) << id;  // the segment was durable first
  }
  EXPECT_EQ(live.size(), 3u + 5u);  // 3 kept + the 5 not removed yet
  // The segment holds the only copies of the 3 removed logs: journaled before the first remove,
  // so its absence stops the sweep, erasure and export though the run never finished.
  ASSERT_EQ(archive.segmentNames().size(), 1u);
  std::string written = archive.segmentNames()[0];
  fs::rename(archiveDir_ / written, scratch_.path() / written);
  EXPECT_THROW(requireJournaledSegments(store_, Archive(archiveDir_)), UnavailableError);
  fs::rename(scratch_.path() / written, archiveDir_ / written);

  RetentionReport r = runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), options());
  EXPECT_EQ(r.removed, 5);
  EXPECT_EQ(r.alreadyArchived, 5) << "never archived twice";
  EXPECT_EQ(r.archived, 0);
  EXPECT_EQ(liveIds(store_),
            (std::set<std::string>{"recent-completed", "old-parked", "old-running"}));
  EXPECT_EQ(archive.segmentNames().size(), 1u);
  for (const auto& id : selected) EXPECT_TRUE(archive.find(id).has_value()) << id;
  // The killed run journaled nothing; this one journals the segment those logs' only copy is in.
  ASSERT_EQ(r.alreadyArchivedIn, std::set<std::string>{archive.segmentNames()[0]});
  std::string name = archive.segmentNames()[0];
  fs::rename(archiveDir_ / name, scratch_.path() / name);
  EXPECT_THROW(requireJournaledSegments(store_, Archive(archiveDir_)), UnavailableError);
  fs::rename(scratch_.path() / name, archiveDir_ / name);
  EXPECT_NO_THROW(requireJournaledSegments(store_, Archive(archiveDir_)));
}

TEST_F(RetentionTest, APublishWhoseOutcomeIsUnknownRemovesNothingAndARerunFinishes) {
  for (bool lands : {true, false}) {
    SCOPED_TRACE(lands ? "the segment landed" : "the segment did not land");
    kernel::MemoryEventStore store;
    kernel::MemorySnapshotStore snapshots;
    for (const auto& info : store_.list({})) {
      store.append(info.id, 1, store_.read(info.id));
    }
    fs::path dir = scratch_.path() / (lands ? "landed" : "lost");
    auto lost = std::make_shared<LostAnswerArchive>(folderArchiveStore(dir), lands);
    EXPECT_THROW(runRetention(store, &snapshots, lost, options()), UnavailableError);
    EXPECT_EQ(liveIds(store), liveIds(store_)) << "a log was removed before its segment was sure";
    EXPECT_EQ(Archive(dir).segmentNames().size(), lands ? 1u : 0u);

    RetentionReport r = runRetention(store, &snapshots, folderArchiveStore(dir), options());
    EXPECT_EQ(r.removed, 2);
    EXPECT_EQ(r.alreadyArchived, lands ? 2 : 0) << "a landed segment is found, not rewritten";
    EXPECT_EQ(r.archived, lands ? 0 : 2);
    EXPECT_EQ(Archive(dir).segmentNames().size(), 1u);
    for (const char* id : {"old-completed", "old-failed"}) {
      EXPECT_TRUE(Archive(dir).find(id).has_value()) << id;
    }
    for (const auto& f : fs::directory_iterator(dir)) {
      EXPECT_FALSE(f.path().filename().string().ends_with(".tmp")) << f.path();
    }
  }
}

TEST_F(RetentionTest, ASegmentThatDoesNotReadBackRemovesNothingAndTheNextRunArchivesAnew) {
  auto live = liveIds(store_);
  auto damaging = std::make_shared<DamagingArchive>(folderArchiveStore(archiveDir_));
  try {
    runRetention(store_, &snapshots_, damaging, options());
    FAIL() << "a damaged segment was trusted";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("retention removed nothing"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(liveIds(store_), live);
  EXPECT_TRUE(snapshots_.latest("old-completed").has_value());
  std::vector<std::string> damaged = Archive(archiveDir_).segmentNames();
  ASSERT_EQ(damaged.size(), 1u);  // published (its index reads), with a damaged block

  // The next run does not take the damaged copy for archived: it archives it anew.
  clock_->advance(1000);  // a later segment, read first
  RetentionReport r = runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), options());
  // Only the first execution's block was damaged, but the segment is refused as a whole by the
  // sweep, erasure and export: the second one's whole copy there is not its only one either.
  EXPECT_EQ(r.alreadyArchived, 0);
  EXPECT_EQ(r.rearchived, 2);
  EXPECT_EQ(r.archived, 2);
  EXPECT_EQ(r.removed, 2);
  EXPECT_TRUE(r.alreadyArchivedIn.empty());
  EXPECT_EQ(r.damagedSegments, std::set<std::string>{damaged[0]});
  EXPECT_NE(describe(r).find("restore it from a backup"), std::string::npos) << describe(r);
  std::vector<kernel::ControlEvent> control = store_.readControl(1);
  ASSERT_FALSE(control.empty());
  EXPECT_EQ(control.back().type, "RETENTION_RUN");
  EXPECT_EQ(json::value(control.back().data.at("damagedSegments")), json::array{damaged[0]})
      << "the control log names the damaged segment";
  for (const char* id : {"old-completed", "old-failed"}) {
    auto copy = Archive(archiveDir_).find(id);  // the newest segment's, whole
    ASSERT_TRUE(copy.has_value()) << id;
    EXPECT_EQ(static_cast<int64_t>(copy->events.size()), copy->info.nextSeq - 1) << id;
  }
}

TEST_F(RetentionTest, ACopyThatDiffersFromTheLiveLogIsNotTakenForArchived) {
  // An earlier run archived these logs and was killed before removing them, but one copy
  // holds a step output the live log does not (as a writer bug would write it, checksummed):
  // its index still matches the live log's version.
  ArchiveWriter writer(folderArchiveStore(archiveDir_), ArchiveWriterOptions{clock_, 3});
  for (const char* id : {"old-completed", "old-failed"}) {
    std::vector<kernel::Event> events = store_.read(id);
    if (std::string(id) == "old-completed") events[1].data["output"] = "not the live output";
    writer.add(*store_.info(id), events);
  }
  writer.finish();
  clock_->advance(1000);
  std::vector<kernel::Event> liveEvents = store_.read("old-completed");
  RetentionReport r = runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), options());
  EXPECT_EQ(r.alreadyArchived, 0);  // old-failed's copy is whole, but in that segment
  EXPECT_EQ(r.rearchived, 2);
  EXPECT_EQ(r.removed, 2);
  auto copy = Archive(archiveDir_).find("old-completed");  // the newest segment's
  ASSERT_TRUE(copy.has_value());
  ASSERT_EQ(copy->events.size(), liveEvents.size());
  for (std::size_t i = 0; i < liveEvents.size(); ++i) {
    EXPECT_EQ(json::toText(kernel::toJson(copy->events[i])),
              json::toText(kernel::toJson(liveEvents[i])))
        << "removed without a true copy";
  }
}

// The archive's disk not mounted, a segment moved away: the runs archived there have no other
// copy. The sweep, erasure and export check first that every segment retention journaled is
// there, rather than take those runs for gone and their blobs for unneeded.
TEST_F(RetentionTest, ASegmentRetentionWroteThatIsGoneIsUnavailableNotNothing) {
  RetentionReport r = runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), options());
  ASSERT_FALSE(r.segmentName.empty());
  Archive archive(archiveDir_);
  EXPECT_NO_THROW(requireJournaledSegments(store_, archive));
  fs::rename(archiveDir_ / r.segmentName, scratch_.path() / r.segmentName);
  try {
    requireJournaledSegments(store_, archive);
    FAIL() << "a missing segment read as no archived run";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find(r.segmentName), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("restore the segment"), std::string::npos);
  }
  fs::rename(scratch_.path() / r.segmentName, archiveDir_ / r.segmentName);
  EXPECT_NO_THROW(requireJournaledSegments(store_, archive));
}

TEST_F(RetentionTest, AKilledRunsTempSegmentIsRemovedByTheNextRun) {
  fs::create_directories(archiveDir_);
  fs::path leftover = archiveDir_ / ".segment-20261201T000000Z-deadbeef.tmp";
  std::ofstream(leftover) << "half a segment";
  RetentionReport r = runRetention(store_, &snapshots_, folderArchiveStore(archiveDir_), options());
  EXPECT_EQ(r.archived, 2);
  EXPECT_FALSE(fs::exists(leftover));
  for (const auto& f : fs::directory_iterator(archiveDir_)) {
    EXPECT_FALSE(f.path().filename().string().ends_with(".tmp")) << f.path();
  }
}

TEST_F(RetentionTest, BadOptionsAreRefused) {
  RetentionOptions o = options();
  o.afterDays = -1;
  EXPECT_THROW(runRetention(store_, nullptr, folderArchiveStore(archiveDir_), o),
               InvalidArgumentError);
  o = options();
  o.pageSize = 0;
  EXPECT_THROW(runRetention(store_, nullptr, folderArchiveStore(archiveDir_), o),
               InvalidArgumentError);
  o = options();
  o.afterMillis = 0;  // everything ended before now
  EXPECT_EQ(runRetention(store_, nullptr, folderArchiveStore(archiveDir_), o).removed, 3);
}

}  // namespace
}  // namespace loom::sweep
