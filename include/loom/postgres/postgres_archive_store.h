// The PostgreSQL ArchiveStore (docs/spec/postgresql.md, "Archive segments"): retention's
// archive segments as rows of the same schema as the PostgreSQL EventStore, so the sweep,
// erasure, export and `loom log` on every machine read the segments any machine wrote.
//   archive_segments(name PK, bytes, chunk_bytes, published_at)  -- one row per segment
//   archive_chunks(segment, chunk, bytes bytea, PK(segment, chunk)) -- its bytes, in chunks
// A segment is published in one transaction (its row, then every chunk): a reader sees it
// whole or not at all. A read fetches only the chunks it needs. A chunk missing or of the
// wrong length is a DataLossError naming the segment and the chunk.
// Thread-safety: every method may be called from any thread concurrently.
#pragma once

#include <filesystem>
#include <memory>

#include "loom/postgres/postgres_event_store.h"
#include "loom/sweep/archive_store.h"

namespace loom::postgres {

// The bytes of one archive_chunks row (the last chunk of a segment may be shorter).
inline constexpr int64_t kArchiveChunkBytes = 1 << 20;

class PostgresArchiveStore : public sweep::ArchiveStore {
 public:
  // Checks the schema version as PostgresEventStore does, on first use (FailedPrecondition
  // then). `stagingDir`: a private folder on this machine where a writer stages a segment
  // before its upload.
  PostgresArchiveStore(const PostgresOptions& options, std::filesystem::path stagingDir);
  ~PostgresArchiveStore() override;

  std::string describe() const override;
  std::string locate(const std::string& name) const override;
  std::vector<std::string> segmentNames() const override;
  std::unique_ptr<sweep::SegmentBytes> open(const std::string& name) const override;
  std::filesystem::path stagingDir() const override;
  void publish(const std::filesystem::path& staged, const std::string& name) override;

  struct Impl;  // opaque; shared with the SegmentBytes it opens

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace loom::postgres
