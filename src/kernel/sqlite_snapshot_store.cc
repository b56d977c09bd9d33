#include "loom/kernel/sqlite_snapshot_store.h"

#include <mutex>
#include <vector>

#include "loom/util/error.h"
#include "snapshot_checks.h"
#include "util/sqlite_db.h"

namespace loom::kernel {
namespace {

using sqlite::Db;
using sqlite::StatementUse;

// A rowid table: states can be large, which WITHOUT ROWID tables handle poorly.
constexpr const char* kCreateTable =
    "CREATE TABLE IF NOT EXISTS snapshots (execution_id TEXT NOT NULL, seq INTEGER NOT NULL, "
    "state TEXT NOT NULL, PRIMARY KEY (execution_id, seq))";

// Rows read per lock hold by forEach, whose visitor runs outside the lock.
constexpr int64_t kForEachChunk = 64;

}  // namespace

struct SqliteSnapshotStore::Impl {
  explicit Impl(SqliteSnapshotStoreOptions o)
      : options(std::move(o)), db(options.path, options.busyTimeoutMillis) {
    db.exec(options.durability == Durability::kFull ? "PRAGMA synchronous = FULL"
                                                    : "PRAGMA synchronous = NORMAL",
            "set synchronous");
    // journal_mode is persistent in the file; the event store sets the same.
    db.useWal();
    db.exec(kCreateTable, "create table snapshots");
    where = "sqlite database '" + options.path + "'";
  }

  Snapshot rowSnapshot(const sqlite::Statement& row, int first) const {
    Snapshot s;
    s.executionId = std::string(row.text(first));
    s.seq = row.int64(first + 1);
    s.state = parseSnapshotState(row.text(first + 2), where, s.executionId, s.seq);
    return s;
  }

  const SqliteSnapshotStoreOptions options;
  std::string where;
  mutable std::mutex mu;
  mutable Db db;  // GUARDED_BY(mu)
};

SqliteSnapshotStore::SqliteSnapshotStore(SqliteSnapshotStoreOptions options) {
  if (options.path.empty() || options.path == ":memory:") {
    throw InvalidArgumentError("sqlite snapshot store needs a database file path, not '" +
                               options.path + "'");
  }
  impl_ = std::make_unique<Impl>(std::move(options));
}

SqliteSnapshotStore::~SqliteSnapshotStore() = default;

void SqliteSnapshotStore::put(const Snapshot& snapshot) {
  checkSnapshotKey(snapshot);
  std::string text = json::toText(snapshot.state);  // rendered outside the lock
  std::lock_guard lock(impl_->mu);
  StatementUse upsert(
      impl_->db.prepare("INSERT INTO snapshots (execution_id, seq, state) VALUES (?1, ?2, ?3) "
                        "ON CONFLICT (execution_id, seq) DO UPDATE SET state = excluded.state"));
  upsert->bind(1, std::string_view(snapshot.executionId));
  upsert->bind(2, snapshot.seq);
  upsert->bind(3, std::string_view(text));
  upsert->step("put snapshot");
}

std::optional<Snapshot> SqliteSnapshotStore::latest(const std::string& executionId) const {
  std::lock_guard lock(impl_->mu);
  StatementUse select(
      impl_->db.prepare("SELECT execution_id, seq, state FROM snapshots WHERE execution_id = ?1 "
                        "ORDER BY seq DESC LIMIT 1"));
  select->bind(1, std::string_view(executionId));
  if (!select->step("read latest snapshot")) return std::nullopt;
  return impl_->rowSnapshot(*select, 0);
}

int64_t SqliteSnapshotStore::remove(const std::string& executionId) {
  std::lock_guard lock(impl_->mu);
  StatementUse del(impl_->db.prepare("DELETE FROM snapshots WHERE execution_id = ?1"));
  del->bind(1, std::string_view(executionId));
  del->step("remove snapshots");
  return impl_->db.changes();
}

int64_t SqliteSnapshotStore::prune(const std::string& executionId, int64_t keepFromSeq) {
  std::lock_guard lock(impl_->mu);
  StatementUse del(impl_->db.prepare("DELETE FROM snapshots WHERE execution_id = ?1 AND seq < ?2"));
  del->bind(1, std::string_view(executionId));
  del->bind(2, keepFromSeq);
  del->step("prune snapshots");
  return impl_->db.changes();
}

void SqliteSnapshotStore::forEach(const std::function<void(const Snapshot&)>& visit) const {
  std::string afterId;
  int64_t afterSeq = 0;
  for (;;) {
    std::vector<Snapshot> chunk;
    {
      std::lock_guard lock(impl_->mu);
      StatementUse select(impl_->db.prepare(
          "SELECT execution_id, seq, state FROM snapshots WHERE (execution_id, seq) > (?1, ?2) "
          "ORDER BY execution_id, seq LIMIT ?3"));
      select->bind(1, std::string_view(afterId));
      select->bind(2, afterSeq);
      select->bind(3, kForEachChunk);
      while (select->step("scan snapshots")) chunk.push_back(impl_->rowSnapshot(*select, 0));
    }
    if (chunk.empty()) return;
    afterId = chunk.back().executionId;
    afterSeq = chunk.back().seq;
    for (const auto& s : chunk) visit(s);
    if (static_cast<int64_t>(chunk.size()) < kForEachChunk) return;
  }
}

const std::string& SqliteSnapshotStore::path() const { return impl_->options.path; }

}  // namespace loom::kernel
