#include "pg_pool.h"

namespace loom::postgres {

int64_t nowMillis(Connection& conn, const std::shared_ptr<const Clock>& clock) {
  if (clock) return clock->nowMillis();
  return conn
      .exec("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint", {},
            "read the server's clock")
      .int64(0, 0);
}

void commit(Connection& conn) {
  try {
    conn.run("COMMIT", "commit");
  } catch (const ConnectionLost& e) {
    throw UnavailableError(std::string(e.what()) +
                           "; the commit's outcome is unknown: it may have been applied, so "
                           "read the state back before doing it again");
  }
}

Pool::Pool(std::string url, std::string schema, std::size_t maxIdle)
    : url_(std::move(url)), schema_(std::move(schema)), maxIdle_(maxIdle) {
  requireIdentifier(schema_);
}

Pool::PoolLease Pool::acquire() {
  {
    std::lock_guard lock(mu_);
    while (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      // One closed by the server while idle is dropped here, before anything is sent on it.
      if (conn->stillOpen()) return PoolLease(*this, std::move(conn), true);
    }
  }
  return PoolLease(*this, std::make_unique<Connection>(url_, schema_), false);
}

Pool::PoolLease Pool::begin(const char* beginSql) {
  for (std::size_t attempt = 0;; ++attempt) {
    auto conn = acquire();
    try {
      conn->run(beginSql, "begin a transaction");
      return conn;
    } catch (const UnavailableError&) {
      if (!conn.reused() || !conn->broken() || attempt > maxIdle_) throw;
    }
  }
}

Pool::PoolLease::~PoolLease() {
  if (conn_ && pool_ != nullptr) pool_->giveBack(std::move(conn_));
}

void Pool::giveBack(std::unique_ptr<Connection> conn) {
  if (conn->inTransaction()) {
    try {
      conn->run("ROLLBACK", "roll back");
    } catch (...) {
      return;  // dropped: its state is unknown
    }
  }
  if (conn->broken()) return;
  std::lock_guard lock(mu_);
  if (idle_.size() < maxIdle_) idle_.push_back(std::move(conn));
}

}  // namespace loom::postgres
