#include "sqlite_work.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>
#include <chrono>

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
