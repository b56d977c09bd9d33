// The kill switch's state: which effect ids an operator has stopped (or "*" for all of
// them), kept in its own table `kill_switch(effect_id TEXT PRIMARY KEY, at INTEGER)` of the
// home's SQLite database (or of a shared PostgreSQL schema: KillSwitchRows) so that
// `loom kill` in one process stops effects in every process using that home. The kill switch
// middleware asks isStopped before every effect; the answer comes from a cached copy re-read at
// most once per refresh interval (250 ms), so a stop written elsewhere is seen within a second and
// SQLite is not read on every effect. Thread-safety: every method may be called from any thread
// concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "loom/effects/errors.h"
#include "loom/middleware/kill_switch_config.h"
#include "loom/util/error.h"

namespace loom::middleware {

// One stop: an effect id (or kAllEffects) and when it was set.
struct KillSwitchEntry {
  std::string effectId;
  int64_t atMillis = 0;
};

// The kill switch's table could not be read (include/loom/effects/errors.h).
using effects::KillSwitchUnreadable;

// Where a kill switch keeps its stops: the rows of table kill_switch. The home's SQLite
// database is the default (KillSwitchStore(options)); postgres::PostgresKillSwitchRows keeps
// them on a shared server. Every implementation runs tests/conformance/kill_switch_conformance.cc.
// Thread-safe; errors are Loom errors naming the store.
class KillSwitchRows {
 public:
  virtual ~KillSwitchRows() = default;
  // Adds the stop of `effectId` (or kAllEffects) at `atMillis`, unless it is there already.
  virtual void insert(std::string_view effectId, int64_t atMillis) = 0;
  // Deletes the stop of `effectId`, or every stop when it is nullopt; returns how many.
  virtual int64_t erase(std::optional<std::string_view> effectId) = 0;
  // Every stop, ordered by effect id (bytewise: "*" first).
  virtual std::vector<KillSwitchEntry> list() const = 0;
};

class KillSwitchStore {
 public:
  // Opens (creating when missing) the database at options.path and the kill_switch table.
  // Throws FailedPreconditionError when the file cannot be opened (missing folder),
  // DataLossError when it is not a SQLite database, UnavailableError when it stays locked.
  explicit KillSwitchStore(KillSwitchOptions options);
  // The same over `rows` (options.path is unused).
  KillSwitchStore(std::unique_ptr<KillSwitchRows> rows, KillSwitchOptions options);
  ~KillSwitchStore();
  KillSwitchStore(const KillSwitchStore&) = delete;
  KillSwitchStore& operator=(const KillSwitchStore&) = delete;

  // Stops `effectId`. A second kill of the same id keeps the first `at`. Throws
  // InvalidArgumentError for an empty id or "*" (use killAll).
  void kill(std::string_view effectId);
  // Stops every effect, whatever its id.
  void killAll();
  // Lifts the stop of `effectId`; returns false when it was not stopped by name. Does not
  // lift killAll: while "*" is set every effect stays stopped (use unkillAll).
  bool unkill(std::string_view effectId);
  // Lifts every stop ("*" and each named one); returns how many were lifted.
  int unkillAll();
  // Every stop, ordered by effect id ("*" first when set), read from the database now.
  std::vector<KillSwitchEntry> list() const;

  // True when `effectId` is stopped by name or by killAll. Answers from a cached copy that
  // is at most refreshMillis old (this store's own kill/unkill calls update it at once).
  // Throws KillSwitchUnreadable when the table cannot be read.
  bool isStopped(std::string_view effectId) const;

  const std::string& path() const { return options_.path; }

 private:
  void refreshLocked(int64_t now) const;
  void invalidate();

  KillSwitchOptions options_;
  std::unique_ptr<KillSwitchRows> rows_;

  mutable std::mutex cacheMu_;
  mutable bool loaded_ = false;                         // GUARDED_BY(cacheMu_)
  mutable int64_t loadedAt_ = 0;                        // GUARDED_BY(cacheMu_)
  mutable bool all_ = false;                            // GUARDED_BY(cacheMu_)
  mutable std::set<std::string, std::less<>> stopped_;  // GUARDED_BY(cacheMu_)
};

}  // namespace loom::middleware
