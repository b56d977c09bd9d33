// What a worker needs from the SQLite home beyond the log (SqliteEventStore::claimRunnable and
// awaitWork; docs/spec/leases.md, "Claiming" and "News of work"):
// - the runnable candidates in one indexed read: running executions nobody holds a live lease
//   of, oldest first;
// - news of work: the writes a worker must hear of (a submission: an execution's first event
//   appended without a lease; a lease released on a run that has not ended) count up
//   meta('work') in their own transaction, and a watcher connection compares
//   `PRAGMA data_version` (which reads no page and moves whenever another connection, in any
//   process, commits) before it reads that row.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "loom/kernel/event_store.h"
#include "util/sqlite_db.h"

namespace loom::kernel {

// Counts one piece of news of work up, in the writer's open transaction.
void noteWork(sqlite::Db& writer);

// Up to `limit` ids of executions whose status is running and whose lease is absent, released
// or expired at `nowMillis`, oldest first (index executions_by_status); with `codeVersion`,
// only those that recorded it or no code version.
std::vector<std::string> unheldRunningExecutions(sqlite::Db& db, int64_t nowMillis,
                                                 std::size_t limit,
                                                 const std::optional<std::string>& codeVersion);

// Worker presence (EventStore::announceWorker, liveWorkers) in table `workers`, at the
// store's time `nowMillis`: written in the writer's open transaction; read with no row when
// the home predates the table.
void writeWorker(sqlite::Db& writer, const WorkerPresence& presence, int64_t ttlMillis,
                 int64_t nowMillis);
std::vector<WorkerPresence> readLiveWorkers(sqlite::Db& db, int64_t nowMillis);

// A connection of its own that tells whether news of work was written since its last look.
// Not thread-safe: one caller at a time.
class WorkWatch {
 public:
  WorkWatch(const std::string& path, int busyTimeoutMillis);
  // True when meta('work') moved since the last call (the first call reads it: false).
  bool newWork();

 private:
  sqlite::Db db_;
  int64_t dataVersion_ = -1;
  int64_t work_ = -1;
};

// `ids` without the ones request.skip names, in order.
std::vector<std::string> claimableIn(const std::vector<std::string>& ids,
                                     const EventStore::ClaimRequest& request);

// awaitWork's side of a SqliteEventStore: committed() by its group commit leader after a
// commit that wrote news of work; await() by the waiters. Thread-safe.
class WorkNews {
 public:
  WorkNews(std::string path, int busyTimeoutMillis)
      : path_(std::move(path)), busyTimeoutMillis_(busyTimeoutMillis) {}
  void committed();
  // True at once after committed(); within 5 ms of news another connection committed (the
  // watch is opened on the first call, which hears only what comes after it); false when
  // `timeoutMillis` passed without news.
  bool await(int64_t timeoutMillis);

 private:
  const std::string path_;
  const int busyTimeoutMillis_;
  std::mutex mu_;  // one waiter looks at a time
  std::condition_variable cv_;
  int64_t committed_ = 0;              // GUARDED_BY(mu_)
  int64_t seen_ = 0;                   // GUARDED_BY(mu_)
  std::unique_ptr<WorkWatch> watch_;   // GUARDED_BY(mu_)
};

}  // namespace loom::kernel
