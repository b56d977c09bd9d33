// ArchiveStore: where archive segments live (SPI; docs/spec/archive-segment.md, "Where segments
// live"). A segment is an immutable byte string under a unique name; the store publishes whole
// segments, lists them oldest first and reads byte ranges of one. It never changes or deletes
// a published segment. The format inside (header, blocks, index, checksums) is the
// ArchiveWriter's and ArchiveSegment's (archive.h): a store only keeps bytes.
// Implementations: folderArchiveStore (a folder of files, the embedded home's <home>/archive)
// and postgres::PostgresArchiveStore (tables on the shared server). Both pass the conformance
// suite in tests/conformance/archive_store_conformance.cc.
// Thread-safety: every method may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace loom::sweep {

// Random access to the bytes of one published segment.
class SegmentBytes {
 public:
  virtual ~SegmentBytes() = default;
  // The segment's length in bytes.
  virtual int64_t size() const = 0;
  // Exactly `n` bytes at `offset`. Throws DataLossError naming the segment and `what` when the
  // segment ends first or a part of it is missing, UnavailableError when it cannot be reached.
  virtual std::string read(int64_t offset, std::size_t n, std::string_view what) const = 0;
};

class ArchiveStore {
 public:
  virtual ~ArchiveStore() = default;

  // Where the segments are, for messages: "archive folder '/x/.loom/archive'".
  virtual std::string describe() const = 0;
  // How a message names segment `name`: its path in a folder, or where on a server.
  virtual std::string locate(const std::string& name) const = 0;

  // Every published segment's name, sorted bytewise (names start with their creation time, so
  // oldest first). Throws UnavailableError when they cannot be listed.
  virtual std::vector<std::string> segmentNames() const = 0;
  // Throws NotFoundError when no segment has that name.
  virtual std::unique_ptr<SegmentBytes> open(const std::string& name) const = 0;

  // A private folder on this machine where a writer stages a segment before publish(). Files
  // in it whose names start with '.' are a writer's; one left by a killed process may be
  // deleted by whoever holds the archive's maintenance lock (retention does).
  virtual std::filesystem::path stagingDir() const = 0;
  // Makes the finished file `staged` (in stagingDir()) the segment `name`, and removes the
  // file. When it returns the segment is durable; a reader sees all of it or nothing of it,
  // whatever crashes. Throws AlreadyExistsError when `name` is taken (nothing changes),
  // UnavailableError when it cannot tell whether the segment was published (a lost answer:
  // list the names to find out), other errors when it was not.
  virtual void publish(const std::filesystem::path& staged, const std::string& name) = 0;
};

// The segments of one folder (<home>/archive), files named <name>; staged in the same folder
// (a rename publishes). A missing folder holds no segment and is created on the first publish.
std::shared_ptr<ArchiveStore> folderArchiveStore(std::filesystem::path dir);

// A segment's name ends with this; nothing else in a folder is a segment.
inline constexpr std::string_view kSegmentExtension = ".lseg";
// True when `name` can name a segment: at most 200 bytes of letters, digits, '-' and '_' (not
// first), ending in kSegmentExtension. Every store checks the names it is given with
// requireSegmentName (InvalidArgumentError otherwise); a folder holding another file ending in
// kSegmentExtension cannot be listed (DataLossError naming it).
bool isSegmentName(std::string_view name);
void requireSegmentName(std::string_view name);

}  // namespace loom::sweep
