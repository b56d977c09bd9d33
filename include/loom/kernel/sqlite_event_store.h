// The SQLite EventStore: the embedded default for execution logs (./.loom/ or --home). One
// database file in WAL mode holds every execution's events, their metadata and the control
// log; metadata is updated in the same transaction as the events, so the two never disagree.
// Appends from many threads are merged by group commit: one leader commits every queued
// append in one transaction (one fsync) and each caller still returns only once its own
// events are durable; a bad request gets its own error without failing the others. Conflict
// detection holds across processes sharing the file (the next seq is read inside the write
// transaction). Reads use their own connections and run beside the writer (WAL readers).
// Thread-safe: every method may be called from any thread concurrently, and a scan visitor
// may call back into the store.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "loom/kernel/event_store.h"
#include "loom/util/clock.h"

namespace loom::sqlite {
class BorrowedWriter;
}

namespace loom::kernel {

// How hard a commit is pushed to disk before append returns.
enum class Durability {
  // synchronous=FULL: the WAL is fsynced on every commit; a commit survives power loss.
  kFull,
  // synchronous=NORMAL in WAL mode: a commit survives a crash of the process, but the last
  // commits may be lost on power loss or an OS crash (the WAL is fsynced at checkpoints).
  kNormal,
};

// "full" or "normal" (the spelling of configuration and flags). Throws InvalidArgumentError
// naming the accepted values for anything else.
Durability durabilityFromName(std::string_view name);
std::string_view durabilityName(Durability durability);

struct SqliteEventStoreOptions {
  std::string path;  // the database file; created with its tables when missing
  Durability durability = Durability::kFull;
  // How long a statement waits for a lock held by another connection or process before the
  // call fails with UnavailableError.
  int busyTimeoutMillis = 5000;
  // The time leases are granted and expire by (every process sharing the file reads its own
  // clock: keep the machine's clock synchronised).
  std::shared_ptr<const Clock> clock = systemClock();
};

class SqliteEventStore : public EventStore {
 public:
  // Opens (creating when missing) the database at options.path. Throws
  // FailedPreconditionError when it was written under a newer EVENT_SCHEMA (the message names
  // both versions), DataLossError when the file is not a readable SQLite database,
  // UnavailableError when another process keeps it locked past the busy timeout.
  explicit SqliteEventStore(SqliteEventStoreOptions options);
  // No call may be running when the store is destroyed.
  ~SqliteEventStore() override;
  SqliteEventStore(const SqliteEventStore&) = delete;
  SqliteEventStore& operator=(const SqliteEventStore&) = delete;

  // EventStore (see event_store.h for each contract). In addition, every method may throw
  // UnavailableError (the database is locked past the busy timeout, the disk is full or
  // reported an I/O error: retry), DataLossError (the file is corrupt) or InternalError (any
  // other SQLite failure); messages name the database path and the operation. append,
  // appendControl and remove go through group commit; if a group's COMMIT fails, every request
  // of the group that wrote gets that error and nothing of the group is stored, except when
  // the COMMIT's flush (fsync) failed: then the group may or may not be on disk, and this store
  // refuses every later write with UnavailableError while the process has the file open (the
  // kernel may have dropped pages it wrote; sqlite::Db marks the file for every connection, so
  // a failed flush another store of the process saw on the same file stops this one too). Not
  // seen: a failure SQLite's background checkpoint reported first, or any with durability
  // normal (no flush).
  int64_t append(const std::string& executionId, int64_t expectedNextSeq,
                 std::vector<Event> events) override;
  void scan(const std::string& executionId, int64_t fromSeq,
            const std::function<void(const Event&)>& visit) const override;
  std::optional<ExecutionInfo> info(const std::string& executionId) const override;
  std::vector<ExecutionInfo> list(const ExecutionFilter& filter) const override;
  bool remove(const std::string& executionId) override;
  int64_t appendControl(int64_t expectedNextSeq, std::vector<ControlEvent> events) override;
  std::vector<ControlEvent> readControl(int64_t fromSeq = 1) const override;
  int64_t lastControlSeq() const override;
  std::vector<ControlEvent> readControlOfTypes(const std::vector<std::string>& types,
                                               int64_t fromSeq = 1) const override;
  // Lease writes go through group commit too (durable as appends are).
  Lease acquireLease(const LeaseRequest& request) override;
  Lease renewLease(const Lease& lease, int64_t ttlMillis) override;
  void releaseLease(const Lease& lease) override;
  std::optional<Lease> currentLease(const std::string& executionId) const override;
  void announceWorker(const WorkerPresence& presence, int64_t ttlMillis) override;
  std::vector<WorkerPresence> liveWorkers() const override;
  // Claims with one indexed read of the candidates (running, no live lease), then one write
  // that takes the lease of each candidate nobody took meanwhile.
  std::vector<Lease> claimRunnable(const ClaimRequest& request) override;
  // News of work (a submission, a lease released on a run that has not ended) committed by
  // this store wakes the waiter at once; news another connection or process committed is seen
  // within 5 ms (PRAGMA data_version, then one row of meta).
  bool awaitWork(int64_t timeoutMillis) const override;
  int64_t appendLeased(const Lease& lease, int64_t expectedNextSeq,
                       std::vector<Event> events) override;

  // Write transactions this store has committed (groups holding at least one write), since it
  // was opened. With group commit, concurrent appends make it smaller than their count.
  int64_t commits() const;
  const std::string& path() const;
  Durability durability() const;

  // This store's writer, lent to another store of the same file (the home's packed blobs, ADR
  // 0017; internal to Loom's stores): each write the borrower runs is a request of group commit
  // like an append, in a savepoint of its own, and its group commits without an fdatasync when
  // it holds only such writes and lease writes (a blob is durable before anything cites it: the
  // citing commit flushes it). The borrower's run() returns false once this store is destroyed.
  std::shared_ptr<sqlite::BorrowedWriter> lendWriter();
  // For simulating this process's death (the simulator): drops the writes staged on the lent
  // writer and not committed yet, as a SIGKILL drops them, where closing the store would commit
  // them. Each one's `done` hears that it is lost. No other call may be running.
  void dropStagedWrites();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::kernel
