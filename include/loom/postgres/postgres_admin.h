// What the commands need of a PostgreSQL schema besides the stores: the home record's rows
// (docs/spec/home-record.md, kept in the meta table under 'home.<name>') and the lock that
// keeps two maintenance commands (`loom sweep`, `loom erase`, `loom retention run`) on one
// schema from racing, on any machine.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "loom/postgres/postgres_event_store.h"

namespace loom::postgres {

// The home record row `name` of the schema; nullopt when it holds none. Throws
// FailedPreconditionError when the schema was never migrated.
std::optional<std::string> readHomeRecordRow(const PostgresOptions& options, std::string_view name);
// Writes the row `name`: with `replace`, over what is there; without, only when there is none.
void writeHomeRecordRow(const PostgresOptions& options, std::string_view name,
                        std::string_view value, bool replace);

// The schema's maintenance lock, one session-level advisory lock that `loom sweep`, `loom erase`
// and `loom retention run` share, held on its own connection until
// destroyed (or until the process or its connection ends: the server releases it).
class MaintenanceLock {
 public:
  // `command` (e.g. "sweep") names the holder in messages. Throws FailedPreconditionError when
  // another session holds the lock.
  MaintenanceLock(const PostgresOptions& options, const std::string& command);
  ~MaintenanceLock();
  MaintenanceLock(const MaintenanceLock&) = delete;
  MaintenanceLock& operator=(const MaintenanceLock&) = delete;

  // Proves the lock is still held: its connection is alive and its session holds it. Throws
  // UnavailableError naming the lock when the connection ended (the server released the lock,
  // so another machine may hold it now): stop, and run the command again.
  void check() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::postgres
