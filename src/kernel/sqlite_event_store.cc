#include "loom/kernel/sqlite_event_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "append_plan.h"
#include "fence_cache.h"
#include "group_commit.h"
#include "lease_rules.h"
#include "lent_writer.h"
#include "log_check.h"
#include "loom/util/error.h"
#include "sqlite_control_reads.h"
#include "sqlite_schema.h"
#include "sqlite_work.h"
#include "util/sqlite_db.h"

namespace loom::kernel {
namespace {

using sqlite::Db;
using sqlite::StatementUse;

// One write handed to group commit, with its outcome.
struct WriteRequest {
  enum class Kind { kAppend, kControl, kRemove, kLease, kBorrowed, kFlush };
  Kind kind = Kind::kAppend;
  const std::string* executionId = nullptr;  // kAppend, kRemove, kLease (null: several)
  int64_t expectedNextSeq = 0;               // kAppend, kControl
  std::vector<Event> events;                 // kAppend
  const Lease* fence = nullptr;              // kAppend under a lease
  std::vector<ControlEvent> control;         // kControl
  // kLease: reads and writes the leases table on the writer, at the group's time.
  std::function<void(Db& writer, int64_t nowMillis)> leaseWrite;
  // kBorrowed: another store's write on this store's writer (lendWriter).
  const std::function<void(Db&)>* borrowedWrite = nullptr;
  // kFlush writes nothing of its own: its group commits the staged writes.
  // Outcome, written by the leader before the caller wakes.
  int64_t nextSeq = 0;
  bool removed = false;
  bool wrote = false;  // its rows are in the group's transaction
  std::exception_ptr error;
};

// The write path's transaction statements, prepared once (Db::prepare keys by address).
constexpr const char* kBegin = "BEGIN IMMEDIATE";
constexpr const char* kCommit = "COMMIT";
constexpr const char* kRollback = "ROLLBACK";
constexpr const char* kSavepoint = "SAVEPOINT request";
constexpr const char* kRelease = "RELEASE request";
constexpr const char* kRollbackTo = "ROLLBACK TO request";
constexpr const char* kSyncFull = "PRAGMA synchronous = FULL";
constexpr const char* kSyncNormal = "PRAGMA synchronous = NORMAL";

// Idle read connections kept for reuse; more are opened while calls overlap.
constexpr std::size_t kMaxIdleReaders = 4;

}  // namespace

struct SqliteEventStore::Impl {
  explicit Impl(SqliteEventStoreOptions o)
      : options(std::move(o)),
        writer(options.path, options.busyTimeoutMillis),
        queue([this](const std::vector<WriteRequest*>& group) { commitGroup(group); }),
        readers(options.path, options.busyTimeoutMillis, kMaxIdleReaders) {
    writer.exec(options.durability == Durability::kFull ? kSyncFull : kSyncNormal,
                "set synchronous");
    // What this writer frees is zeroed, not left in free pages: an erased execution's rows, and
    // the blobs of the home's pack whose puts it runs (lendWriter), whose rows an insert may
    // move or a re-put rewrite (ADR 0014: a delete leaves no copy of the bytes).
    writer.exec("PRAGMA secure_delete = ON", "enable secure_delete");
    schema::prepareSchema(writer);
    // Prepared now, not on first use: an error path must not fail to prepare its ROLLBACK.
    for (const char* sql : {kBegin, kCommit, kRollback, kSavepoint, kRelease, kRollbackTo}) {
      writer.prepare(sql);
    }
  }

  // A read connection used by one call at a time, back to the pool when the lease ends.
  sqlite::ReaderPool::Lease reader() const { return readers.acquire(); }

  // Hands `request` to group commit; rethrows its own error.
  void submit(WriteRequest& request) {
    queue.submit(request);
    if (request.error) std::rethrow_exception(request.error);
  }

  // On close: commits what is staged. A group that fails stages its writes again, and a write
  // is lost once kStagedWriteGroups groups failed around it, so this ends within that many.
  void flushStaged() {
    while (!staged.empty()) {
      WriteRequest flush;
      flush.kind = WriteRequest::Kind::kFlush;
      queue.submit(flush);
    }
  }

  // Runs on the leader: one transaction for the whole group, the writes staged so far first
  // (StagedWrites::takeForGroup says why that order holds).
  void commitGroup(const std::vector<WriteRequest*>& group) {
    std::vector<StagedWrite>& stagedWrites = staged.takeForGroup();
    // A COMMIT that failed and could not be rolled back may have left a transaction open.
    if (writer.inTransaction()) writer.runNoThrow(kRollback);
    try {
      // After a failed flush the kernel may have dropped pages this process wrote, earlier
      // groups' included (a lease group commits without a flush): nothing more is written
      // (sqlite::Db marks the file for every connection of this process).
      writer.requireNoFailedFlush();
      syncCommits(!needsNoFlush(group));
      writer.run(kBegin, "begin write transaction");
    } catch (...) {
      failGroup(group, std::current_exception());
      return;
    }
    groupBroken = false;
    try {
      fences.startGroup(writer);
    } catch (...) {
      failGroup(group, std::current_exception());
      return;
    }
    bool wrote = false;
    for (StagedWrite& w : stagedWrites) {
      if (!applyStaged(w)) {
        failGroup(group, w.error);
        return;
      }
      wrote = wrote || !w.error;
    }
    for (WriteRequest* r : group) {
      try {
        apply(*r);
        wrote = wrote || r->wrote;
      } catch (...) {
        r->error = std::current_exception();
        r->wrote = false;
        // Some errors (I/O, full disk) roll the whole transaction back: the group fails.
        if (groupBroken || !writer.inTransaction()) {
          failGroup(group, r->error);
          return;
        }
      }
    }
    try {
      writer.run(kCommit, "commit write transaction");
      if (wrote) commits.fetch_add(1, std::memory_order_relaxed);
      if (std::exchange(groupNotedWork, false)) workNews.committed();
    } catch (...) {
      failGroup(group, std::current_exception());
      return;
    }
    staged.finishGroup(nullptr);
  }

  // Runs a staged write in a savepoint; a failed one is lost (its key refuses the appends that
  // cite it) and the rest of the group goes on. False when the failure broke the transaction.
  bool applyStaged(StagedWrite& w) {
    try {
      inSavepoint([&] { runLentWrite(writer, w.write); });
      staged.written(w);
      return true;
    } catch (...) {
      w.error = std::current_exception();
      staged.lose(w);
      return !groupBroken && writer.inTransaction();
    }
  }

  // A group of lease writes and lent writes alone commits without an fdatasync (durability
  // full): a lease only matters while its owner lives, every runner on this host dies with the
  // machine that could lose it, and a lent write (a packed blob) is cited only by a later commit
  // here; the WAL is ordered, so the next synced commit makes them durable too. Other processes
  // see them once committed.
  static bool needsNoFlush(const std::vector<WriteRequest*>& group) {
    return std::all_of(group.begin(), group.end(), [](const WriteRequest* r) {
      return r->kind == WriteRequest::Kind::kLease || r->kind == WriteRequest::Kind::kBorrowed ||
             r->kind == WriteRequest::Kind::kFlush;
    });
  }
  void syncCommits(bool sync) {
    if (options.durability != Durability::kFull || sync == syncing) return;
    writer.run(sync ? kSyncFull : kSyncNormal, "set synchronous");
    syncing = sync;
  }

  // Rolls the group's transaction back; every request not already refused on its own gets
  // `error` (its writes, if any, are gone with the transaction).
  void failGroup(const std::vector<WriteRequest*>& group, const std::exception_ptr& error) {
    // Rolling back is the only way on; a failure here is retried before the next BEGIN.
    if (writer.inTransaction()) writer.runNoThrow(kRollback);
    fences.forgetAll();  // what this group read may be gone with it
    for (WriteRequest* r : group) {
      if (!r->error || r->wrote) r->error = error;
      r->wrote = false;
    }
    staged.finishGroup(error);
  }

  // Runs `write` inside a savepoint, so a request failing halfway leaves nothing behind and
  // the rest of the group can still commit. Every transaction statement is prepared once.
  template <typename Write>
  void inSavepoint(Write&& write) {
    writer.run(kSavepoint, "begin savepoint");
    try {
      write();
      writer.run(kRelease, "release savepoint");
    } catch (...) {
      if (!writer.inTransaction() || writer.runNoThrow(kRollbackTo) != SQLITE_OK ||
          writer.runNoThrow(kRelease) != SQLITE_OK) {
        groupBroken = true;  // this request's rows may still be there: nobody may commit
      }
      throw;
    }
  }

  void apply(WriteRequest& r) {
    switch (r.kind) {
      case WriteRequest::Kind::kAppend:
        return applyAppend(r);
      case WriteRequest::Kind::kControl:
        return applyControl(r);
      case WriteRequest::Kind::kRemove:
        return applyRemove(r);
      case WriteRequest::Kind::kLease:
        if (r.executionId != nullptr) {
          fences.forget(*r.executionId);
        } else {
          fences.forgetAll();  // leases of several executions (claimRunnable)
        }
        inSavepoint([&] { r.leaseWrite(writer, options.clock->nowMillis()); });
        r.wrote = true;
        return;
      case WriteRequest::Kind::kBorrowed:
        // The borrower's rows are no log's: the fences this group proved stay proven.
        inSavepoint([&] { runLentWrite(writer, *r.borrowedWrite); });
        r.wrote = true;
        return;
      case WriteRequest::Kind::kFlush:
        return;
    }
  }

  void applyAppend(WriteRequest& r) {
    // Read inside the write transaction: correct against other processes too.
    if (r.fence && !fences.proven(*r.fence)) {
      if (!schema::holdsLease(writer, *r.fence)) {  // the error reads it all
        requireCurrentLease(schema::readLease(writer, *r.executionId), *r.fence, "append");
      }
      fences.remember(*r.fence);
    }
    auto before = schema::readInfo(writer, *r.executionId);
    const bool submitted = !before && r.fence == nullptr;  // news for workers (sqlite_work.h)
    AppendPlan plan = planAppend(*r.executionId, std::move(before), r.expectedNextSeq,
                                 std::move(r.events));
    staged.refuseCitingLost(*r.executionId, plan, options.path, writer);
    inSavepoint([&] {
      StatementUse insert(
          writer.prepare("INSERT INTO events (execution_id, seq, body, checksum) "
                         "VALUES (?1, ?2, ?3, ?4)"));
      for (std::size_t i = 0; i < plan.events.size(); ++i) {
        insert->bind(1, std::string_view(*r.executionId));
        insert->bind(2, plan.events[i].seq);
        insert->bind(3, std::string_view(plan.texts[i]));
        insert->bind(4, rowChecksum(*r.executionId, plan.events[i].seq, plan.texts[i]));
        insert->step("append event");
        insert->reset();
      }
      schema::writeInfo(writer, plan.after);
      if (submitted) noteWork(writer);
    });
    r.wrote = true;
    r.nextSeq = plan.after.nextSeq;
    groupNotedWork = groupNotedWork || submitted;
  }

  void applyControl(WriteRequest& r) {
    int64_t current = 1;
    {
      StatementUse next(writer.prepare("SELECT COALESCE(MAX(seq), 0) + 1 FROM control"));
      next->step("read control log seq");
      current = next->int64(0);
    }
    std::vector<std::string> texts = planControlAppend(current, r.expectedNextSeq, r.control);
    inSavepoint([&] {
      StatementUse insert(
          writer.prepare("INSERT INTO control (seq, body, checksum) VALUES (?1, ?2, ?3)"));
      for (std::size_t i = 0; i < texts.size(); ++i) {
        insert->bind(1, r.control[i].seq);
        insert->bind(2, std::string_view(texts[i]));
        insert->bind(3, rowChecksum("", r.control[i].seq, texts[i]));
        insert->step("append control event");
        insert->reset();
      }
    });
    r.wrote = true;
    r.nextSeq = r.expectedNextSeq + static_cast<int64_t>(texts.size());
  }

  void applyRemove(WriteRequest& r) {
    inSavepoint([&] {
      StatementUse events(writer.prepare("DELETE FROM events WHERE execution_id = ?1"));
      events->bind(1, std::string_view(*r.executionId));
      events->step("remove events");
      bool hadEvents = writer.changes() > 0;
      StatementUse meta(writer.prepare("DELETE FROM executions WHERE id = ?1"));
      meta->bind(1, std::string_view(*r.executionId));
      meta->step("remove execution metadata");
      r.removed = hadEvents || writer.changes() > 0;
      fences.forget(*r.executionId);
      schema::removeLease(writer, *r.executionId);
    });
    r.wrote = r.removed;
  }

  const SqliteEventStoreOptions options;
  Db writer;  // used only by the group's leader (GroupCommitQueue serializes leaders)
  bool groupBroken = false;  // used only by the leader: a savepoint could not be undone
  bool syncing = true;       // used only by the leader: synchronous is FULL (durability full)
  FenceCache fences;         // used only by the leader
  bool groupNotedWork = false;  // used only by the leader: its group wrote news of work

  // News of work committed by this store wakes awaitWork's waiters in this process at once.
  WorkNews workNews{options.path, options.busyTimeoutMillis};
  StagedWrites staged;       // written with the next group (lendWriter's stage)
  GroupCommitQueue<WriteRequest> queue;
  std::atomic<int64_t> commits{0};
  sqlite::ReaderPool readers;
  std::mutex lentMu;
  std::shared_ptr<LentWriter> lent;  // GUARDED_BY(lentMu): made by lendWriter, closed on close
};

SqliteEventStore::SqliteEventStore(SqliteEventStoreOptions options) {
  if (options.path.empty() || options.path == ":memory:") {
    throw InvalidArgumentError("sqlite event store needs a database file path, not '" +
                               options.path + "'");
  }
  impl_ = std::make_unique<Impl>(std::move(options));
}

SqliteEventStore::~SqliteEventStore() {
  std::lock_guard lock(impl_->lentMu);
  if (!impl_->lent) return;
  impl_->lent->close();  // nothing stages any more
  impl_->flushStaged();
}

void SqliteEventStore::dropStagedWrites() {
  impl_->staged.dropAll(std::make_exception_ptr(UnavailableError(
      "sqlite database '" + impl_->options.path + "': the process died before the write")));
}

std::shared_ptr<sqlite::BorrowedWriter> SqliteEventStore::lendWriter() {
  std::lock_guard lock(impl_->lentMu);
  if (!impl_->lent) {
    Impl* impl = impl_.get();
    impl_->lent = std::make_shared<LentWriter>(
        impl->options.path,
        [impl](const std::function<void(Db&)>& write) {
          WriteRequest r;
          r.kind = WriteRequest::Kind::kBorrowed;
          r.borrowedWrite = &write;
          impl->submit(r);
        },
        [impl](StagedWrite w) { impl->staged.add(std::move(w)); });
  }
  return impl_->lent;
}

int64_t SqliteEventStore::append(const std::string& executionId, int64_t expectedNextSeq,
                                 std::vector<Event> events) {
  WriteRequest r;
  r.kind = WriteRequest::Kind::kAppend;
  r.executionId = &executionId;
  r.expectedNextSeq = expectedNextSeq;
  r.events = std::move(events);
  impl_->submit(r);
  return r.nextSeq;
}

void SqliteEventStore::scan(const std::string& executionId, int64_t fromSeq,
                            const std::function<void(const Event&)>& visit) const {
  auto db = impl_->reader();
  // The metadata and the rows from one snapshot, so they can be checked against each other.
  sqlite::ReadTransaction snapshot(*db);
  ScanCheck check(executionId, fromSeq, [&]() -> std::optional<int64_t> {
    auto info = schema::readInfo(*db, executionId);
    return info ? std::optional<int64_t>(info->nextSeq) : std::nullopt;
  }());
  StatementUse select(
      db->prepare("SELECT seq, body, checksum FROM events WHERE execution_id = ?1 AND seq >= ?2 "
                  "ORDER BY seq"));
  select->bind(1, std::string_view(executionId));
  select->bind(2, fromSeq);
  while (select->step("scan events")) {
    int64_t seq = select->int64(0);
    verifyRowChecksum(executionId, seq, select->text(1),
                      select->isNull(2) ? std::nullopt : std::optional<int64_t>(select->int64(2)));
    Event event = eventFromText(executionId, seq, select->text(1));
    check.visit(event);
    visit(event);
  }
  check.finish();
}

std::optional<ExecutionInfo> SqliteEventStore::info(const std::string& executionId) const {
  auto db = impl_->reader();
  return schema::readInfo(*db, executionId);
}

std::vector<ExecutionInfo> SqliteEventStore::list(const ExecutionFilter& filter) const {
  // One statement for every filter: an absent field binds NULL and matches everything.
  static const std::string kSql =
      std::string("SELECT ") + schema::kExecutionColumns +
      " FROM executions WHERE id > ?1 AND (?2 IS NULL OR workflow = ?2)"
      " AND (?3 IS NULL OR subject = ?3) AND (?4 IS NULL OR status = ?4)"
      " AND (?5 IS NULL OR (ended_at IS NOT NULL AND ended_at < ?5)) ORDER BY id LIMIT ?6";
  auto db = impl_->reader();
  StatementUse select(db->prepare(kSql.c_str()));
  select->bind(1, std::string_view(filter.afterId));
  select->bind(2, filter.workflow);
  select->bind(3, filter.subject);
  select->bind(
      4, filter.status ? std::optional<std::string>(statusName(*filter.status)) : std::nullopt);
  select->bind(5, filter.endedBeforeMillis);
  select->bind(6, filter.limit == 0 ? int64_t{-1} : static_cast<int64_t>(filter.limit));
  std::vector<ExecutionInfo> out;
  while (select->step("list executions")) out.push_back(schema::infoFromRow(*select));
  return out;
}

bool SqliteEventStore::remove(const std::string& executionId) {
  WriteRequest r;
  r.kind = WriteRequest::Kind::kRemove;
  r.executionId = &executionId;
  impl_->submit(r);
  return r.removed;
}

int64_t SqliteEventStore::appendControl(int64_t expectedNextSeq, std::vector<ControlEvent> events) {
  WriteRequest r;
  r.kind = WriteRequest::Kind::kControl;
  r.expectedNextSeq = expectedNextSeq;
  r.control = std::move(events);
  impl_->submit(r);
  return r.nextSeq;
}

std::vector<ControlEvent> SqliteEventStore::readControl(int64_t fromSeq) const {
  auto db = impl_->reader();
  StatementUse select(
      db->prepare("SELECT seq, body, checksum FROM control WHERE seq >= ?1 ORDER BY seq"));
  select->bind(1, fromSeq);
  std::vector<ControlEvent> out;
  int64_t expected = fromSeq > 1 ? fromSeq : 1;
  while (select->step("read control log")) {
    int64_t seq = select->int64(0);
    verifyControlRowChecksum(
        seq, select->text(1),
        select->isNull(2) ? std::nullopt : std::optional<int64_t>(select->int64(2)));
    if (seq != expected++) {
      throw CorruptEventError("(control log)", expected - 1,
                              "the row is missing (the log goes on at seq " + std::to_string(seq) +
                                  "); restore loom.db from a backup");
    }
    out.push_back(controlEventFromText(seq, select->text(1)));
  }
  return out;
}

int64_t SqliteEventStore::lastControlSeq() const {
  auto db = impl_->reader();
  StatementUse select(db->prepare("SELECT COALESCE(MAX(seq), 0) FROM control"));
  select->step("read the control log's end");
  return select->int64(0);
}

std::vector<ControlEvent> SqliteEventStore::readControlOfTypes(
    const std::vector<std::string>& types, int64_t fromSeq) const {
  return controlEventsOfTypes(*impl_->reader(), types, fromSeq);
}

Lease SqliteEventStore::acquireLease(const LeaseRequest& request) {
  Lease granted;
  WriteRequest r;
  r.kind = WriteRequest::Kind::kLease;
  r.executionId = &request.executionId;
  r.leaseWrite = [&](Db& writer, int64_t now) {
    granted = grantLease(schema::readLease(writer, request.executionId), request, now);
    schema::writeLease(writer, granted);
  };
  impl_->submit(r);
  return granted;
}

Lease SqliteEventStore::renewLease(const Lease& lease, int64_t ttlMillis) {
  Lease renewed;
  WriteRequest r;
  r.kind = WriteRequest::Kind::kLease;
  r.executionId = &lease.executionId;
  r.leaseWrite = [&](Db& writer, int64_t now) {
    renewed = renewedLease(schema::readLease(writer, lease.executionId), lease, ttlMillis, now);
    schema::writeLease(writer, renewed);
  };
  impl_->submit(r);
  return renewed;
}

void SqliteEventStore::releaseLease(const Lease& lease) {
  WriteRequest r;
  r.kind = WriteRequest::Kind::kLease;
  r.executionId = &lease.executionId;
  r.leaseWrite = [&](Db& writer, int64_t) {
    auto current = schema::readLease(writer, lease.executionId);
    if (!isCurrentLease(current, lease)) return;
    current->released = true;
    schema::writeLease(writer, *current);
    auto info = schema::readInfo(writer, lease.executionId);
    if (!info || !isEnded(info->status)) {  // a run left to do: news for workers
      noteWork(writer);
      impl_->groupNotedWork = true;
    }
  };
  impl_->submit(r);
}

std::optional<Lease> SqliteEventStore::currentLease(const std::string& executionId) const {
  auto db = impl_->reader();
  return schema::readLease(*db, executionId);
}

void SqliteEventStore::announceWorker(const WorkerPresence& presence, int64_t ttlMillis) {
  validatePresence(presence, ttlMillis);
  WriteRequest r;
  r.kind = WriteRequest::Kind::kLease;  // no execution's: every fence is proven again
  r.leaseWrite = [&](Db& writer, int64_t now) { writeWorker(writer, presence, ttlMillis, now); };
  impl_->submit(r);
}

std::vector<WorkerPresence> SqliteEventStore::liveWorkers() const {
  auto db = impl_->reader();
  return readLiveWorkers(*db, impl_->options.clock->nowMillis());
}

int64_t SqliteEventStore::appendLeased(const Lease& lease, int64_t expectedNextSeq,
                                       std::vector<Event> events) {
  WriteRequest r;
  r.kind = WriteRequest::Kind::kAppend;
  r.executionId = &lease.executionId;
  r.fence = &lease;
  r.expectedNextSeq = expectedNextSeq;
  r.events = std::move(events);
  impl_->submit(r);
  return r.nextSeq;
}

std::vector<Lease> SqliteEventStore::claimRunnable(const ClaimRequest& request) {
  std::vector<std::string> ids;
  if (request.limit > 0) {
    auto db = impl_->reader();
    ids = unheldRunningExecutions(*db, impl_->options.clock->nowMillis(),
                                  request.limit + request.skip.size(), request.codeVersion);
  }
  // One write for them all: the leases of every candidate nobody took meanwhile.
  std::vector<Lease> claimed;
  WriteRequest r;
  r.kind = WriteRequest::Kind::kLease;
  r.leaseWrite = [&](Db& writer, int64_t now) {
    claimed.clear();  // a group that failed and is retried starts over
    for (const auto& id : claimableIn(ids, request)) {
      if (claimed.size() >= request.limit) break;
      try {
        claimed.push_back(grantLease(schema::readLease(writer, id),
                                     {id, request.owner, request.ttlMillis, std::nullopt}, now));
        schema::writeLease(writer, claimed.back());
      } catch (const LeaseHeldError&) {
        // claimed first by another worker
      }
    }
  };
  if (!ids.empty()) impl_->submit(r);
  return claimed;
}

bool SqliteEventStore::awaitWork(int64_t timeoutMillis) const {
  return impl_->workNews.await(timeoutMillis);
}

int64_t SqliteEventStore::commits() const { return impl_->commits.load(std::memory_order_relaxed); }

const std::string& SqliteEventStore::path() const { return impl_->options.path; }

Durability SqliteEventStore::durability() const { return impl_->options.durability; }

}  // namespace loom::kernel
