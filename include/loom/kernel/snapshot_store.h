// SnapshotStore SPI: stored folded state of an execution at a seq, so a resume reads the
// newest snapshot plus the events after it instead of the whole log. A snapshot pins every
// content address it cites (the sweep keeps them: over-retain, never lose).
// Contract: thread-safe; put of an existing (execution, seq) replaces it; values are copied.
// Implementations (tests/conformance/snapshot_store_conformance.cc): MemorySnapshotStore,
// SqliteSnapshotStore, postgres::PostgresSnapshotStore. A stored state that cannot be read is a
// DataLossError naming the execution and the seq.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "loom/json/json.h"

namespace loom::kernel {

struct Snapshot {
  std::string executionId;
  int64_t seq = 0;    // the state includes every event up to and including this seq
  json::value state;  // the workflow runtime's replay state (docs/spec/snapshots.md)
};

class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;
  // Stores a copy of `snapshot`, replacing one at the same (execution, seq). Throws
  // InvalidArgumentError for an empty execution id or a seq below 1.
  virtual void put(const Snapshot& snapshot) = 0;
  // The snapshot with the highest seq of an execution; nullopt when it has none.
  virtual std::optional<Snapshot> latest(const std::string& executionId) const = 0;
  // Deletes every snapshot of an execution; returns how many.
  virtual int64_t remove(const std::string& executionId) = 0;
  // Deletes the snapshots of an execution whose seq is below `keepFromSeq`; returns how many.
  // The runtime calls it after each put, so a log snapshotted every N events keeps one
  // snapshot instead of a growing pile (each pinning what it cites).
  virtual int64_t prune(const std::string& executionId, int64_t keepFromSeq) = 0;
  // Every snapshot (for the sweep and export), in no particular order. The visitor may call
  // back into the store; snapshots put or removed meanwhile may or may not be visited.
  virtual void forEach(const std::function<void(const Snapshot&)>& visit) const = 0;
};

}  // namespace loom::kernel
