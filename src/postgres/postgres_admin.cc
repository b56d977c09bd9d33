#include "loom/postgres/postgres_admin.h"

#include "pg_connection.h"
#include "pg_schema.h"

namespace loom::postgres {
namespace {

std::string metaKey(std::string_view name) { return "home." + std::string(name); }

}  // namespace

std::optional<std::string> readHomeRecordRow(const PostgresOptions& options,
                                             std::string_view name) {
  Connection conn(options.url, options.schema);
  schema::check(conn);
  Result r = conn.execDynamic("SELECT value FROM meta WHERE key = $1", {Param::text(metaKey(name))},
                              "read the home record");
  if (r.rows() == 0) return std::nullopt;
  return std::string(r.text(0, 0));
}

void writeHomeRecordRow(const PostgresOptions& options, std::string_view name,
                        std::string_view value, bool replace) {
  Connection conn(options.url, options.schema);
  schema::check(conn);
  std::string sql = replace ? "INSERT INTO meta (key, value) VALUES ($1, $2) "
                              "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                            : "INSERT INTO meta (key, value) VALUES ($1, $2) "
                              "ON CONFLICT (key) DO NOTHING";
  conn.execDynamic(sql, {Param::text(metaKey(name)), Param::text(value)}, "write the home record");
}

struct MaintenanceLock::Impl {
  Impl(const PostgresOptions& options, std::string n)
      : conn(options.url, options.schema), name(std::move(n)), schema(options.schema) {}
  Connection conn;
  const std::string name;
  const std::string schema;
};

MaintenanceLock::MaintenanceLock(const PostgresOptions& options, const std::string& command)
    : impl_(std::make_unique<Impl>(options, command)) {
  Result r = impl_->conn.execDynamic("SELECT pg_try_advisory_lock(hashtext($1))",
                                     {Param::text("loom " + options.schema + " maintenance")},
                                     "take the maintenance lock");
  if (!r.boolean(0, 0)) {
    throw FailedPreconditionError(
        "`loom " + command + "` did not start: another maintenance command (`loom sweep`, " +
        "`loom erase` or `loom retention run`) is running on the postgresql schema '" +
        options.schema + "' (its advisory lock is held); wait for it to finish, then run again");
  }
}

MaintenanceLock::~MaintenanceLock() = default;  // closing the connection releases the lock

void MaintenanceLock::check() const {
  std::string lost = "the maintenance lock of `loom " + impl_->name +
                     "` on the postgresql schema '" + impl_->schema + "' was lost";
  int64_t held = 0;
  try {
    held = impl_->conn
               .execDynamic(
                   "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                   "granted AND pid = pg_backend_pid()",
                   {}, "check the maintenance lock")
               .int64(0, 0);
  } catch (const UnavailableError& e) {
    throw UnavailableError(lost + " (" + e.what() +
                           "), so another maintenance command may be running now; this one "
                           "stopped: run it again");
  }
  if (held == 0) {
    throw UnavailableError(lost + "; this one stopped: run it again");
  }
}

}  // namespace loom::postgres
