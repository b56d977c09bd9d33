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
  std::unique_lock lock(shared_->mu);
  const auto deadline = std::chrono::steady_clock::now() + kMaxWait;
  for (;;) {
    while (!shared_->idle.empty()) {
      auto conn = std::move(shared_->idle.back());
      shared_->idle.pop_back();
      // One closed by the server while idle is dropped here, before anything is sent on it.
      if (conn->stillOpen()) {
        ++shared_->holders[std::this_thread::get_id()];
        return PoolLease(*this, std::move(conn), true);
      }
      --shared_->open;
    }
    // A thread holding a connection already may be the one the others wait for.
    bool mayOpen = shared_->open < shared_->maxIdle.load() ||
                   shared_->holders.count(std::this_thread::get_id()) > 0 ||
                   std::chrono::steady_clock::now() >= deadline;
    if (mayOpen) break;
    shared_->returned.wait_until(lock, deadline);
  }
  ++shared_->open;
  ++shared_->holders[std::this_thread::get_id()];
  lock.unlock();
  return PoolLease(*this, openCounted(), false);
}

// A new connection, counted as this thread's already; uncounted again when it cannot be opened.
std::unique_ptr<Connection> Pool::openCounted() {
  try {
    return std::make_unique<Connection>(shared_->url, shared_->schema);
  } catch (...) {
    {
      std::lock_guard lock(shared_->mu);
      forgetLocked(std::this_thread::get_id());
    }
    shared_->returned.notify_one();
    throw;
  }
}

void Pool::forgetLocked(std::thread::id holder) {
  --shared_->open;
  released(holder);
}

void Pool::released(std::thread::id holder) {
  auto it = shared_->holders.find(holder);
  if (it != shared_->holders.end() && --it->second == 0) shared_->holders.erase(it);
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
  if (conn_ && pool_ != nullptr) pool_->giveBack(std::move(conn_), holder_);
}

void Pool::giveBack(std::unique_ptr<Connection> conn, std::thread::id holder) {
  if (conn->inTransaction()) {
    try {
      conn->run("ROLLBACK", "roll back");
    } catch (...) {
      conn.reset();  // dropped: its state is unknown
    }
  }
  {
    std::lock_guard lock(shared_->mu);
    if (!conn || conn->broken() || shared_->idle.size() >= shared_->maxIdle) {
      forgetLocked(holder);
    } else {
      released(holder);
      shared_->idle.push_back(std::move(conn));
    }
  }
  shared_->returned.notify_one();
  // A connection past maxIdle (`conn` still set) closes here, outside the lock.
}

}  // namespace loom::postgres
