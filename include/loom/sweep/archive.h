// Archive segments (ADR 0138; byte layout in docs/spec/archive-segment.md): read-only,
// zstd-compressed segments that hold the events and metadata of ended executions after
// retention removed their live logs. An ArchiveStore (archive_store.h) keeps them: files in
// <home>/archive/ on the embedded home, tables on PostgreSQL. `loom log` reads them and the
// sweep pins every content address they cite.
// - ArchiveWriter writes one segment: a temp file in the store's staging folder, fsynced, then
//   published under its final name, so a reader sees a whole segment or none.
// - ArchiveSegment opens one segment, validating header, footer, index and checksums; any
//   defect (truncated, flipped bytes, wrong magic) is a DataLossError naming the segment and
//   what is wrong, and a newer format version a FailedPreconditionError. Never silently partial.
// - Archive is every segment of one store.
// Thread-safety: an ArchiveWriter is used by one thread. ArchiveSegment and Archive are
// immutable after open; their const methods may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "loom/kernel/event.h"
#include "loom/kernel/execution_info.h"
#include "loom/sweep/archive_store.h"
#include "loom/util/clock.h"

namespace loom::sweep {

// The segment format this build writes, and the oldest it reads.
inline constexpr uint32_t kArchiveFormatVersion = 1;
inline constexpr uint32_t kArchiveFormatOldestReadable = 1;
// One archived execution: its metadata as the live store last had it, and its events.
struct ArchivedExecution {
  kernel::ExecutionInfo info;
  std::vector<kernel::Event> events;  // seq 1, 2, 3, ...
};

// Feeds the events of one execution, in seq order, to `sink` (see ArchiveWriter::add).
using EventSource = std::function<void(const std::function<void(const kernel::Event&)>& sink)>;
using ArchiveEventVisitor =
    std::function<void(const std::string& executionId, const kernel::Event& event)>;

struct ArchiveWriterOptions {
  std::shared_ptr<const Clock> clock = systemClock();  // the segment's created-at
  int compressionLevel = 3;                            // zstd level, 1..19
};

class ArchiveWriter {
 public:
  // Creates the store's staging folder when missing and a temp file in it (a name starting
  // with '.', which no reader takes for a segment). Throws UnavailableError when the folder or
  // file cannot be created.
  explicit ArchiveWriter(std::shared_ptr<ArchiveStore> store, ArchiveWriterOptions options = {});
  // The same for folderArchiveStore(dir).
  explicit ArchiveWriter(std::filesystem::path dir, ArchiveWriterOptions options = {});
  // An unfinished segment's temp file is deleted.
  ~ArchiveWriter();
  ArchiveWriter(const ArchiveWriter&) = delete;
  ArchiveWriter& operator=(const ArchiveWriter&) = delete;

  // Appends one execution: `info` and the events `source` feeds, streamed into one compressed
  // block (memory stays bounded by the compressor's window, not the log). The events must be
  // seq 1, 2, ... and as many as info.nextSeq - 1: otherwise InvalidArgumentError (a log that
  // changed or lost events while archived). Throws InvalidArgumentError for an empty id or
  // one added already (the writer stays usable), UnavailableError on a write failure; an
  // error from `source` propagates. After a failure while writing the block the writer is
  // unusable (FailedPreconditionError) and no segment is ever made of it.
  void add(const kernel::ExecutionInfo& info, const EventSource& source);
  void add(const kernel::ExecutionInfo& info, const std::vector<kernel::Event>& events);

  // Executions added so far.
  int64_t count() const;

  // Writes the index and footer, fsyncs the file and publishes it under its final name
  // (segment-<created-at>-<random>.lseg): when it returns, the segment is durable. Returns the
  // name. Throws UnavailableError on an I/O failure or a publish whose outcome is unknown (as
  // ArchiveStore::publish), and FailedPreconditionError after a failure or a second call.
  std::string finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ArchiveSegment {
 public:
  // Opens and validates segment `name` of `store`: magic, format version, footer, the checksum
  // over header and index, and every index entry. Throws NotFoundError when the store has no
  // such segment, FailedPreconditionError for a format version this build cannot read,
  // DataLossError for any other defect (each naming the segment).
  static ArchiveSegment open(const ArchiveStore& store, const std::string& name);
  // The segment file at `path` (folderArchiveStore of its folder).
  static ArchiveSegment open(const std::filesystem::path& path);
  ~ArchiveSegment();
  ArchiveSegment(ArchiveSegment&&) noexcept;
  ArchiveSegment& operator=(ArchiveSegment&&) noexcept;

  const std::string& name() const;
  // Where it is, for messages (ArchiveStore::locate).
  const std::string& location() const;
  uint32_t formatVersion() const;
  int64_t createdAtMillis() const;
  int64_t fileBytes() const;  // the segment's length in bytes

  // The metadata of every execution in the segment, ordered by id. Reads no block.
  std::vector<kernel::ExecutionInfo> listExecutions() const;
  bool contains(const std::string& executionId) const;

  // One execution's metadata and events; nullopt when the segment does not hold it. Checks
  // the block's checksum (DataLossError naming the file, execution and offset on mismatch);
  // a bad row is a CorruptEventError naming the execution and seq.
  std::optional<ArchivedExecution> read(const std::string& executionId) const;
  // read() one event at a time (one event in memory, not the whole log); false when the
  // segment does not hold the execution. Errors as read().
  bool forEachEventOf(const std::string& executionId,
                      const std::function<void(const kernel::Event&)>& visit) const;

  // Every execution, ordered by id, one block in memory at a time. Errors as read().
  void forEachExecution(const std::function<void(const ArchivedExecution&)>& visit) const;
  // Every event of every execution, one execution in memory at a time. Errors as read().
  void forEachEvent(const ArchiveEventVisitor& visit) const;

 private:
  struct Impl;
  explicit ArchiveSegment(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Every segment of one store, but those it was told are retired (a damaged segment whose every
// run is whole elsewhere: `loom retention supersede`, readableArchive in supersede.h). An
// execution archived twice (retention interrupted between writing a segment and removing the
// live logs, then run again) is in two segments, with the same events.
class Archive {
 public:
  explicit Archive(std::shared_ptr<const ArchiveStore> store,
                   std::set<std::string> retired = {});
  // folderArchiveStore(dir).
  explicit Archive(std::filesystem::path dir);

  const ArchiveStore& store() const { return *store_; }
  // The segments of the store that this archive does not read.
  const std::set<std::string>& retired() const { return retired_; }

  // The segments' names, oldest first, without the retired ones. Throws UnavailableError when
  // they cannot be listed.
  std::vector<std::string> segmentNames() const;
  // ArchiveSegment::open(store(), name).
  ArchiveSegment openSegment(const std::string& name) const;

  // Opens each segment in turn and visits it. A segment that cannot be opened throws (as
  // ArchiveSegment::open): the caller never sees a silently partial archive.
  void forEachSegment(const std::function<void(const ArchiveSegment&)>& visit) const;

  // The newest archived copy of an execution; nullopt when no segment holds it.
  std::optional<ArchivedExecution> find(const std::string& executionId) const;

  // Every event of every segment (an execution in two segments is visited twice), one
  // execution in memory at a time.
  void forEachEvent(const ArchiveEventVisitor& visit) const;

 private:
  std::shared_ptr<const ArchiveStore> store_;
  std::set<std::string> retired_;
};

}  // namespace loom::sweep
