#include "loom/middleware/kill_switch_store.h"

#include "util/sqlite_db.h"

namespace loom::middleware {
namespace {

constexpr const char* kCreateTable =
    "CREATE TABLE IF NOT EXISTS kill_switch (effect_id TEXT PRIMARY KEY, at INTEGER NOT NULL)";

void checkEffectId(std::string_view effectId, std::string_view what) {
  if (effectId.empty()) {
    throw InvalidArgumentError(std::string(what) + " needs an effect id (or --all)");
  }
  if (effectId == kAllEffects) {
    throw InvalidArgumentError(std::string(what) + ": '*' is not an effect id; use --all");
  }
}

// Prepared once per connection (sqlite::Db::prepare keeps them by address).
constexpr const char* kInsert = "INSERT OR IGNORE INTO kill_switch (effect_id, at) VALUES (?1, ?2)";
constexpr const char* kDeleteOne = "DELETE FROM kill_switch WHERE effect_id = ?1";
constexpr const char* kDeleteAll = "DELETE FROM kill_switch";
constexpr const char* kList = "SELECT effect_id, at FROM kill_switch ORDER BY effect_id";

// The home's SQLite database: one connection under a mutex.
class SqliteKillSwitchRows : public KillSwitchRows {
 public:
  SqliteKillSwitchRows(const std::string& path, int busyTimeoutMillis)
      : db_(path, busyTimeoutMillis) {
    if (path != ":memory:") {
      // The event store of the same home uses WAL; agreeing here keeps the setting whichever
      // opens the file first (journal_mode is persistent in the file).
      db_.useWal();
    }
    db_.exec(kCreateTable, "create table kill_switch");
  }

  void insert(std::string_view effectId, int64_t atMillis) override {
    std::lock_guard lock(mu_);
    sqlite::StatementUse insert(db_.prepare(kInsert));
    insert->bind(1, effectId);
    insert->bind(2, atMillis);
    insert->step("kill");
  }

  int64_t erase(std::optional<std::string_view> effectId) override {
    std::lock_guard lock(mu_);
    sqlite::StatementUse remove(db_.prepare(effectId ? kDeleteOne : kDeleteAll));
    if (effectId) remove->bind(1, *effectId);
    remove->step(effectId ? "unkill" : "unkill --all");
    return db_.changes();
  }

  std::vector<KillSwitchEntry> list() const override {
    std::lock_guard lock(mu_);
    sqlite::StatementUse select(db_.prepare(kList));
    std::vector<KillSwitchEntry> out;
    while (select->step("read the kill switch")) {
      out.push_back({std::string(select->text(0)), select->int64(1)});
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  mutable sqlite::Db db_;  // GUARDED_BY(mu_)
};

}  // namespace

KillSwitchStore::KillSwitchStore(KillSwitchOptions options)
    : KillSwitchStore(
          std::make_unique<SqliteKillSwitchRows>(options.path, options.busyTimeoutMillis),
          options) {}

KillSwitchStore::KillSwitchStore(std::unique_ptr<KillSwitchRows> rows, KillSwitchOptions options)
    : options_(std::move(options)), rows_(std::move(rows)) {
  if (!options_.clock) options_.clock = systemClock();
}

KillSwitchStore::~KillSwitchStore() = default;

void KillSwitchStore::kill(std::string_view effectId) {
  checkEffectId(effectId, "kill");
  rows_->insert(effectId, options_.clock->nowMillis());
  invalidate();
}

void KillSwitchStore::killAll() {
  rows_->insert(kAllEffects, options_.clock->nowMillis());
  invalidate();
}

bool KillSwitchStore::unkill(std::string_view effectId) {
  checkEffectId(effectId, "unkill");
  bool removed = rows_->erase(effectId) > 0;
  invalidate();
  return removed;
}

int KillSwitchStore::unkillAll() {
  int removed = static_cast<int>(rows_->erase(std::nullopt));
  invalidate();
  return removed;
}

std::vector<KillSwitchEntry> KillSwitchStore::list() const { return rows_->list(); }

bool KillSwitchStore::isStopped(std::string_view effectId) const {
  std::lock_guard lock(cacheMu_);
  int64_t now = options_.clock->nowMillis();
  if (!loaded_ || now - loadedAt_ >= options_.refreshMillis || now < loadedAt_) {
    try {
      refreshLocked(now);
    } catch (const Error& e) {
      // Fail closed: an unreadable switch stops the effect (the run parks, resumable).
      throw KillSwitchUnreadable(std::string(effectId), e.what());
    }
  }
  return all_ || stopped_.find(effectId) != stopped_.end();
}

void KillSwitchStore::refreshLocked(int64_t now) const {
  bool all = false;
  std::set<std::string, std::less<>> stopped;
  for (auto& entry : rows_->list()) {
    if (entry.effectId == kAllEffects) {
      all = true;
    } else {
      stopped.insert(std::move(entry.effectId));
    }
  }
  all_ = all;
  stopped_ = std::move(stopped);
  loadedAt_ = now;
  loaded_ = true;
}

void KillSwitchStore::invalidate() {
  std::lock_guard lock(cacheMu_);
  loaded_ = false;
}

}  // namespace loom::middleware
