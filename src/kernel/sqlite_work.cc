#include "sqlite_work.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>
#include <chrono>

#include "lease_rules.h"
#include "loom/kernel/lease.h"

namespace loom::kernel {

using sqlite::StatementUse;

void noteWork(sqlite::Db& writer) {
  StatementUse note(writer.prepare(
      "INSERT INTO meta (key, value) VALUES ('work', '1') "
      "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"));
  note->step("note news of work");
}

std::vector<std::string> unheldRunningExecutions(sqlite::Db& db, int64_t nowMillis,
                                                 std::size_t limit,
                                                 const std::optional<std::string>& codeVersion) {
  StatementUse select(db.prepare(
      "SELECT e.id FROM executions e INDEXED BY executions_by_status "
      "LEFT JOIN leases l ON l.execution_id = e.id "
      "WHERE e.status = 'running' "
      "AND (l.execution_id IS NULL OR l.released <> 0 OR l.expires_at <= ?1) "
      "AND (?3 IS NULL OR e.code_version IS NULL OR e.code_version = ?3) "
      "ORDER BY e.started_at LIMIT ?2"));
  select->bind(1, nowMillis);
  select->bind(2, static_cast<int64_t>(limit));
  select->bind(3, codeVersion);
  std::vector<std::string> ids;
  while (select->step("list the runnable executions")) ids.emplace_back(select->text(0));
  return ids;
}

void writeWorker(sqlite::Db& writer, const WorkerPresence& presence, int64_t ttlMillis,
                 int64_t nowMillis) {
  StatementUse forget(writer.prepare("DELETE FROM workers WHERE expires_at <= ?1"));
  forget->bind(1, nowMillis - kForgetWorkersAfterMillis);
  forget->step("forget the workers gone a day ago");
  StatementUse upsert(writer.prepare(
      "INSERT OR REPLACE INTO workers (owner_id, host, pid, runs, leaves, seen_at, expires_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  upsert->bind(1, std::string_view(presence.owner.id));
  upsert->bind(2, std::string_view(presence.owner.host));
  upsert->bind(3, presence.owner.pid);
  upsert->bind(4, std::string_view(versionsText(presence.runs)));
  upsert->bind(5, std::string_view(versionsText(presence.leaves)));
  upsert->bind(6, nowMillis);
  upsert->bind(7, nowMillis + ttlMillis);
  upsert->step("record a worker's presence");
}

std::vector<WorkerPresence> readLiveWorkers(sqlite::Db& db, int64_t nowMillis) {
  std::vector<WorkerPresence> out;
  if (!db.hasColumn("workers", "owner_id")) return out;
  StatementUse select(db.prepare(
      "SELECT owner_id, host, pid, runs, leaves, seen_at, expires_at FROM workers "
      "WHERE expires_at > ?1 ORDER BY owner_id"));
  select->bind(1, nowMillis);
  while (select->step("read the workers' presence")) {
    WorkerPresence& w = out.emplace_back();
    w.owner.id = std::string(select->text(0));
    w.owner.host = std::string(select->text(1));
    w.owner.pid = select->int64(2);
    w.runs = versionsFromText(select->text(3), w.owner.id);
    w.leaves = versionsFromText(select->text(4), w.owner.id);
    w.seenAtMillis = select->int64(5);
    w.expiresAtMillis = select->int64(6);
  }
  return out;
}

WorkWatch::WorkWatch(const std::string& path, int busyTimeoutMillis)
    : db_(path, busyTimeoutMillis) {}

bool WorkWatch::newWork() {
  int64_t version = 0;
  {
    StatementUse pragma(db_.prepare("PRAGMA data_version"));
    pragma->step("read data_version");
    version = pragma->int64(0);
  }
  if (version == dataVersion_) return false;
  dataVersion_ = version;
  int64_t work = 0;
  {
    StatementUse select(
        db_.prepare("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'work'"));
    if (select->step("read meta.work")) work = select->int64(0);
  }
  bool moved = work_ >= 0 && work != work_;
  work_ = work;
  return moved;
}

std::vector<std::string> claimableIn(const std::vector<std::string>& ids,
                                     const EventStore::ClaimRequest& request) {
  std::unordered_set<std::string_view> skip(request.skip.begin(), request.skip.end());
  std::vector<std::string> out;
  for (const auto& id : ids) {
    if (!skip.contains(id)) out.push_back(id);
  }
  return out;
}

void WorkNews::committed() {
  {
    std::lock_guard lock(mu_);
    ++committed_;
  }
  cv_.notify_all();
}

bool WorkNews::await(int64_t timeoutMillis) {
  using std::chrono::steady_clock;
  constexpr auto kLook = std::chrono::milliseconds(5);  // how often other connections are seen
  const auto until = steady_clock::now() + std::chrono::milliseconds(timeoutMillis);
  std::unique_lock lock(mu_);
  if (!watch_) {
    watch_ = std::make_unique<WorkWatch>(path_, busyTimeoutMillis_);
    watch_->newWork();
  }
  for (;;) {
    if (committed_ != seen_) {
      seen_ = committed_;
      return true;
    }
    if (watch_->newWork()) return true;
    if (steady_clock::now() >= until) return false;
    cv_.wait_until(lock, std::min(until, steady_clock::now() + kLook));
  }
}

}  // namespace loom::kernel
