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
constexpr const char* kSelectIds = "SELECT effect_id FROM kill_switch";

}  // namespace

KillSwitchStore::KillSwitchStore(KillSwitchOptions options) : options_(std::move(options)) {
  if (!options_.clock) options_.clock = systemClock();
  db_ = std::make_unique<sqlite::Db>(options_.path, options_.busyTimeoutMillis);
  if (options_.path != ":memory:") {
    // The event store of the same home uses WAL; agreeing here keeps the setting whichever
    // opens the file first (journal_mode is persistent in the file).
    db_->useWal();
  }
  db_->exec(kCreateTable, "create table kill_switch");
}

KillSwitchStore::~KillSwitchStore() = default;

void KillSwitchStore::kill(std::string_view effectId) {
  checkEffectId(effectId, "kill");
  {
    std::lock_guard lock(dbMu_);
    sqlite::StatementUse insert(db_->prepare(kInsert));
    insert->bind(1, effectId);
    insert->bind(2, options_.clock->nowMillis());
    insert->step("kill");
  }
  invalidate();
}

void KillSwitchStore::killAll() {
  {
    std::lock_guard lock(dbMu_);
    sqlite::StatementUse insert(db_->prepare(kInsert));
    insert->bind(1, kAllEffects);
    insert->bind(2, options_.clock->nowMillis());
    insert->step("kill --all");
  }
  invalidate();
}

bool KillSwitchStore::unkill(std::string_view effectId) {
  checkEffectId(effectId, "unkill");
  bool removed = false;
  {
    std::lock_guard lock(dbMu_);
    sqlite::StatementUse remove(db_->prepare(kDeleteOne));
    remove->bind(1, effectId);
    remove->step("unkill");
    removed = db_->changes() > 0;
  }
  invalidate();
  return removed;
}

int KillSwitchStore::unkillAll() {
  int removed = 0;
  {
    std::lock_guard lock(dbMu_);
    sqlite::StatementUse remove(db_->prepare(kDeleteAll));
    remove->step("unkill --all");
    removed = static_cast<int>(db_->changes());
  }
  invalidate();
  return removed;
}

std::vector<KillSwitchEntry> KillSwitchStore::list() const {
  std::lock_guard lock(dbMu_);
  sqlite::StatementUse select(db_->prepare(kList));
  std::vector<KillSwitchEntry> out;
  while (select->step("list the kill switch")) {
    out.push_back({std::string(select->text(0)), select->int64(1)});
  }
  return out;
}

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
  {
    std::lock_guard lock(dbMu_);
    sqlite::StatementUse select(db_->prepare(kSelectIds));
    while (select->step("read the kill switch")) {
      std::string_view id = select->text(0);
      if (id == kAllEffects) {
        all = true;
      } else {
        stopped.emplace(id);
      }
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
