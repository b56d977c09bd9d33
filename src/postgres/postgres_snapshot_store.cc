#include "loom/postgres/postgres_snapshot_store.h"

#include <vector>

#include "kernel/snapshot_checks.h"
#include "pg_pool.h"
#include "pg_schema.h"

namespace loom::postgres {
namespace {

// Rows read per round trip by forEach, whose visitor runs with no connection held.
constexpr int64_t kForEachChunk = 64;

}  // namespace

struct PostgresSnapshotStore::Impl {
  explicit Impl(const PostgresOptions& options)
      : pool(options.url, options.schema, options.maxIdleConnections),
        where("postgresql schema '" + options.schema + "'") {
    auto conn = pool.acquire();
    schema::check(*conn);
  }

  std::vector<kernel::Snapshot> rows(const Result& r) const {
    std::vector<kernel::Snapshot> out;
    for (int row = 0; row < r.rows(); ++row) {
      kernel::Snapshot s;
      s.executionId = std::string(r.text(row, 0));
      s.seq = r.int64(row, 1);
      s.state = kernel::parseSnapshotState(r.text(row, 2), where, s.executionId, s.seq);
      out.push_back(std::move(s));
    }
    return out;
  }

  mutable Pool pool;
  const std::string where;
};

PostgresSnapshotStore::PostgresSnapshotStore(const PostgresOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}

PostgresSnapshotStore::~PostgresSnapshotStore() = default;

void PostgresSnapshotStore::put(const kernel::Snapshot& snapshot) {
  kernel::checkSnapshotKey(snapshot);
  std::string text = json::toText(snapshot.state);
  withConnection(impl_->pool, [&](Connection& conn) {  // an upsert: safe to run twice
    return conn.exec(
        "INSERT INTO snapshots (execution_id, seq, state) VALUES ($1, $2, $3) "
        "ON CONFLICT (execution_id, seq) DO UPDATE SET state = excluded.state",
        {Param::text(snapshot.executionId), Param::int64(snapshot.seq), Param::bytes(text)},
        "put snapshot");
  });
}

std::optional<kernel::Snapshot> PostgresSnapshotStore::latest(
    const std::string& executionId) const {
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec(
        "SELECT execution_id, seq, state FROM snapshots WHERE execution_id = $1 "
        "ORDER BY seq DESC LIMIT 1",
        {Param::text(executionId)}, "read latest snapshot");
  });
  auto found = impl_->rows(r);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

int64_t PostgresSnapshotStore::remove(const std::string& executionId) {
  auto conn = impl_->pool.acquire();
  return conn
      ->exec("DELETE FROM snapshots WHERE execution_id = $1", {Param::text(executionId)},
             "remove snapshots")
      .changed();
}

int64_t PostgresSnapshotStore::prune(const std::string& executionId, int64_t keepFromSeq) {
  auto conn = impl_->pool.acquire();
  return conn
      ->exec("DELETE FROM snapshots WHERE execution_id = $1 AND seq < $2",
             {Param::text(executionId), Param::int64(keepFromSeq)}, "prune snapshots")
      .changed();
}

void PostgresSnapshotStore::forEach(
    const std::function<void(const kernel::Snapshot&)>& visit) const {
  std::string afterId;
  int64_t afterSeq = 0;
  for (;;) {
    std::vector<kernel::Snapshot> chunk;
    {
      Result r = withConnection(impl_->pool, [&](Connection& conn) {
        return conn.exec(
            "SELECT execution_id, seq, state FROM snapshots WHERE (execution_id, seq) > ($1, $2) "
            "ORDER BY execution_id, seq LIMIT $3",
            {Param::text(afterId), Param::int64(afterSeq), Param::int64(kForEachChunk)},
            "scan snapshots");
      });
      chunk = impl_->rows(r);
    }
    if (chunk.empty()) return;
    afterId = chunk.back().executionId;
    afterSeq = chunk.back().seq;
    for (const auto& s : chunk) visit(s);
    if (static_cast<int64_t>(chunk.size()) < kForEachChunk) return;
  }
}

}  // namespace loom::postgres
