#include "pg_workers.h"

#include "kernel/lease_rules.h"

namespace loom::postgres {

void writeWorker(Pool& pool, const std::shared_ptr<const Clock>& clock,
                 const kernel::WorkerPresence& presence, int64_t ttlMillis) {
  kernel::validatePresence(presence, ttlMillis);
  withConnection(pool, [&](Connection& conn) {
    const int64_t now = nowMillis(conn, clock);
    // One statement: the word of the workers gone a day ago is forgotten with it.
    conn.exec(
        "WITH forget AS (DELETE FROM workers WHERE expires_at <= $8) "
        "INSERT INTO workers (owner_id, host, pid, runs, leaves, seen_at, expires_at) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (owner_id) DO UPDATE SET "
        "host = excluded.host, pid = excluded.pid, runs = excluded.runs, "
        "leaves = excluded.leaves, seen_at = excluded.seen_at, expires_at = excluded.expires_at",
        {Param::text(presence.owner.id), Param::text(presence.owner.host),
         Param::int64(presence.owner.pid), Param::text(kernel::versionsText(presence.runs)),
         Param::text(kernel::versionsText(presence.leaves)), Param::int64(now),
         Param::int64(now + ttlMillis), Param::int64(now - kernel::kForgetWorkersAfterMillis)},
        "record a worker's presence");
    return 0;
  });
}

std::vector<kernel::WorkerPresence> readLiveWorkers(Pool& pool,
                                                    const std::shared_ptr<const Clock>& clock) {
  std::vector<kernel::WorkerPresence> out;
  withConnection(pool, [&](Connection& conn) {
    const int64_t now = nowMillis(conn, clock);
    Result r = conn.exec(
        "SELECT owner_id, host, pid, runs, leaves, seen_at, expires_at FROM workers "
        "WHERE expires_at > $1 ORDER BY owner_id",
        {Param::int64(now)}, "read the workers' presence");
    out.clear();
    for (int row = 0; row < r.rows(); ++row) {
      kernel::WorkerPresence& w = out.emplace_back();
      w.owner.id = std::string(r.text(row, 0));
      w.owner.host = std::string(r.text(row, 1));
      w.owner.pid = r.int64(row, 2);
      w.runs = kernel::versionsFromText(r.text(row, 3), w.owner.id);
      w.leaves = kernel::versionsFromText(r.text(row, 4), w.owner.id);
      w.seenAtMillis = r.int64(row, 5);
      w.expiresAtMillis = r.int64(row, 6);
    }
    return 0;
  });
  return out;
}

}  // namespace loom::postgres
