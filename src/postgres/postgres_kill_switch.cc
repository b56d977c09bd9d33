#include "loom/postgres/postgres_kill_switch.h"

#include "pg_pool.h"
#include "pg_schema.h"

namespace loom::postgres {

struct PostgresKillSwitchRows::Impl {
  explicit Impl(const PostgresOptions& options)
      : pool(options.url, options.schema, options.maxIdleConnections) {
    auto conn = pool.acquire();
    schema::check(*conn);
  }
  mutable Pool pool;
};

PostgresKillSwitchRows::PostgresKillSwitchRows(const PostgresOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}

PostgresKillSwitchRows::~PostgresKillSwitchRows() = default;

void PostgresKillSwitchRows::insert(std::string_view effectId, int64_t atMillis) {
  withConnection(impl_->pool, [&](Connection& conn) {  // ON CONFLICT DO NOTHING: safe twice
    return conn.exec(
        "INSERT INTO kill_switch (effect_id, at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        {Param::text(effectId), Param::int64(atMillis)}, "kill");
  });
}

int64_t PostgresKillSwitchRows::erase(std::optional<std::string_view> effectId) {
  auto conn = impl_->pool.acquire();
  if (!effectId) return conn->exec("DELETE FROM kill_switch", {}, "unkill --all").changed();
  return conn
      ->exec("DELETE FROM kill_switch WHERE effect_id = $1", {Param::text(*effectId)}, "unkill")
      .changed();
}

std::vector<middleware::KillSwitchEntry> PostgresKillSwitchRows::list() const {
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec("SELECT effect_id, at FROM kill_switch ORDER BY effect_id", {},
                     "read the kill switch");
  });
  std::vector<middleware::KillSwitchEntry> out;
  for (int row = 0; row < r.rows(); ++row) {
    out.push_back({std::string(r.text(row, 0)), r.int64(row, 1)});
  }
  return out;
}

}  // namespace loom::postgres
