#include "pg_pool.h"

#include <algorithm>
#include <map>
#include <utility>

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

namespace {

// The process's shared pool states, by url and schema; an entry lives while a Pool uses it.
std::shared_ptr<Pool::Shared> sharedState(const std::string& url, const std::string& schema,
                                          std::size_t maxIdle) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::weak_ptr<Pool::Shared>> states;
  std::lock_guard lock(mu);
  auto& slot = states[{url, schema}];
  std::shared_ptr<Pool::Shared> state = slot.lock();
  if (!state) {
    state = std::make_shared<Pool::Shared>();
    state->url = url;
    state->schema = schema;
    slot = state;
  }
  std::size_t seen = state->maxIdle.load();
  while (seen < maxIdle && !state->maxIdle.compare_exchange_weak(seen, maxIdle)) {
  }
  return state;
}

}  // namespace

Pool::Pool(std::string url, std::string schema, std::size_t maxIdle) {
  requireIdentifier(schema);
  shared_ = sharedState(url, schema, maxIdle);
}

const std::string& Pool::schema() const { return shared_->schema; }

Pool::PoolLease Pool::acquire() {
  {
    std::lock_guard lock(shared_->mu);
    while (!shared_->idle.empty()) {
      auto conn = std::move(shared_->idle.back());
      shared_->idle.pop_back();
      // One closed by the server while idle is dropped here, before anything is sent on it.
      if (conn->stillOpen()) return PoolLease(*this, std::move(conn), true);
    }
  }
  return PoolLease(*this, std::make_unique<Connection>(shared_->url, shared_->schema), false);
}

Pool::PoolLease Pool::begin(const char* beginSql) {
  for (std::size_t attempt = 0;; ++attempt) {
    auto conn = acquire();
    try {
      conn->run(beginSql, "begin a transaction");
      return conn;
    } catch (const UnavailableError&) {
      if (!conn.reused() || !conn->broken() || attempt > shared_->maxIdle) throw;
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
  std::lock_guard lock(shared_->mu);
  if (shared_->idle.size() < shared_->maxIdle) shared_->idle.push_back(std::move(conn));
}

}  // namespace loom::postgres
