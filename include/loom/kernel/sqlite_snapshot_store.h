// The SQLite SnapshotStore: the embedded default, one table in the home's loom.db beside the
// events (its own connection; the file is in WAL mode, so it reads and writes beside the event
// store's connections and other processes):
//   snapshots(execution_id TEXT, seq INTEGER, state TEXT, PRIMARY KEY (execution_id, seq))
// `state` is the compact JSON text of Snapshot::state. A row whose text is not JSON is a
// DataLossError naming the database, the execution and the seq.
// Thread-safe: every method may be called from any thread concurrently (one connection behind
// a mutex); a forEach visitor may call back into the store.
#pragma once

#include <memory>
#include <string>

#include "loom/kernel/snapshot_store.h"
#include "loom/kernel/sqlite_event_store.h"

namespace loom::kernel {

struct SqliteSnapshotStoreOptions {
  std::string path;  // the database file (the home's loom.db); created when missing
  // A lost snapshot only makes a resume read more of the log, so NORMAL is the default.
  Durability durability = Durability::kNormal;
  // How long a statement waits for a lock held by another connection before the call fails
  // with UnavailableError.
  int busyTimeoutMillis = 5000;
};

class SqliteSnapshotStore : public SnapshotStore {
 public:
  // Opens (creating when missing) the database at options.path and its snapshots table.
  // Throws InvalidArgumentError for an empty path or ":memory:", DataLossError when the file
  // is not a SQLite database, UnavailableError when it stays locked past the busy timeout.
  explicit SqliteSnapshotStore(SqliteSnapshotStoreOptions options);
  // No call may be running when the store is destroyed.
  ~SqliteSnapshotStore() override;
  SqliteSnapshotStore(const SqliteSnapshotStore&) = delete;
  SqliteSnapshotStore& operator=(const SqliteSnapshotStore&) = delete;

  // SnapshotStore (see snapshot_store.h for each contract). In addition, every method may
  // throw UnavailableError (locked past the busy timeout, a full disk, a disk I/O error:
  // retry), DataLossError (a corrupt
  // file or state) or InternalError (any other SQLite failure); messages name the path.
  void put(const Snapshot& snapshot) override;
  std::optional<Snapshot> latest(const std::string& executionId) const override;
  int64_t remove(const std::string& executionId) override;
  int64_t prune(const std::string& executionId, int64_t keepFromSeq) override;
  void forEach(const std::function<void(const Snapshot&)>& visit) const override;

  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::kernel
