// A pool of connections to one server and schema, shared by every Pool of this process for the
// same url and schema (each store of a process makes its own Pool: they share the connections,
// so a process keeps at most maxIdle of them, not maxIdle per store). acquire() hands out an idle
// connection, or opens a new one while fewer than maxIdle are open; past that a thread waits for
// one to come back, so a thousand runs at once share maxIdle connections instead of each opening
// its own. A thread that holds a connection already never waits (a scan's visitor calling back
// into its store opens another), and neither does one that waited kMaxWait: it opens one beyond
// the bound, so the bound can slow a caller, never stop it. A connection comes back when its
// PoolLease ends, rolled back if a transaction was left open, and is dropped when broken or when
// maxIdle are idle already. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "loom/util/clock.h"
#include "pg_connection.h"

namespace loom::postgres {

// The stores' time in ms since the epoch: `clock` when set (tests), else the server's clock,
// shared by every machine.
int64_t nowMillis(Connection& conn, const std::shared_ptr<const Clock>& clock);

// COMMIT; a lost answer is an UnavailableError saying the outcome is unknown.
void commit(Connection& conn);

// A change that commits on its own (one statement outside a transaction): the answer lost on
// the way (ConnectionLost) is an UnavailableError saying the outcome is unknown, as a COMMIT's
// is. A refusal the server answered with wrote nothing and is thrown as it is.
template <typename Params>
Result execCommitting(Connection& conn, const char* sql, const Params& params,
                      std::string_view op) {
  try {
    return conn.exec(sql, params, op);
  } catch (const ConnectionLost& e) {
    throw UnavailableError(std::string(e.what()) +
                           "; the outcome is unknown: it may have been applied, so read the "
                           "state back before doing it again");
  }
}
inline Result execCommitting(Connection& conn, const char* sql, std::initializer_list<Param> params,
                             std::string_view op) {
  return execCommitting<std::initializer_list<Param>>(conn, sql, params, op);
}

class Pool {
 public:
  Pool(std::string url, std::string schema, std::size_t maxIdle);

  // How long acquire() waits for a connection to come back before opening one past the bound.
  static constexpr std::chrono::milliseconds kMaxWait{5000};

  class PoolLease {
   public:
    PoolLease(Pool& pool, std::unique_ptr<Connection> conn, bool reused)
        : pool_(&pool), conn_(std::move(conn)), reused_(reused), holder_(std::this_thread::get_id()) {}
    PoolLease(PoolLease&&) = default;
    ~PoolLease();
    Connection& operator*() const { return *conn_; }
    Connection* operator->() const { return conn_.get(); }
    // True when the connection was idle in the pool, where the server may have dropped it.
    bool reused() const { return reused_; }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> conn_;
    bool reused_;
    std::thread::id holder_;  // the thread that acquired it
  };

  PoolLease acquire();
  // A connection with `beginSql` (its BEGIN) run on it. A connection the server dropped while
  // it sat idle (a restart, a failover) is replaced: nothing was sent but the BEGIN.
  PoolLease begin(const char* beginSql);
  const std::string& schema() const;

  // What the Pools of one url and schema share.
  struct Shared {
    std::string url;
    std::string schema;
    std::atomic<std::size_t> maxIdle{0};
    std::mutex mu;
    std::condition_variable returned;                // a connection came back or was dropped
    std::vector<std::unique_ptr<Connection>> idle;  // GUARDED_BY(mu)
    std::size_t open = 0;                           // GUARDED_BY(mu): idle and lent
    std::map<std::thread::id, int> holders;         // GUARDED_BY(mu): lent, by thread
  };

 private:
  std::unique_ptr<Connection> openCounted();
  void giveBack(std::unique_ptr<Connection> conn, std::thread::id holder);
  // One connection of `holder` fewer is open (dropped, or closed past maxIdle); `mu` held.
  void forgetLocked(std::thread::id holder);
  void released(std::thread::id holder);  // `mu` held

  std::shared_ptr<Shared> shared_;
};

// Runs `read(connection)`; when a connection that sat idle in the pool turns out dropped by the
// server (a restart, a failover), runs it once more on a new one. Only for calls that are safe
// to run twice (reads, idempotent writes).
template <typename Read>
auto withConnection(Pool& pool, Read&& read) {
  auto conn = pool.acquire();
  if (!conn.reused()) return read(*conn);
  try {
    return read(*conn);
  } catch (const UnavailableError&) {
    if (!conn->broken()) throw;
  }
  auto fresh = pool.acquire();
  return read(*fresh);
}

// Runs `body(connection)` in a transaction (`begin` is its BEGIN statement) and commits;
// rolls back and rethrows what it throws. A RetryTransaction (serialization failure, deadlock)
// runs it again, up to 20 times (Pool::begin replaces a connection the server dropped while
// it sat idle). A COMMIT whose answer was lost is an
// UnavailableError saying its outcome is unknown. Returns what `body` returns.
template <typename Body>
auto inTransaction(Pool& pool, const char* begin, Body&& body) {
  for (int attempt = 1;; ++attempt) {
    auto conn = pool.begin(begin);
    try {
      if constexpr (std::is_void_v<decltype(body(*conn))>) {
        body(*conn);
        commit(*conn);
        return;
      } else {
        auto out = body(*conn);
        commit(*conn);
        return out;
      }
    } catch (const RetryTransaction&) {
      if (attempt >= 20) throw;
    }
  }
}

}  // namespace loom::postgres
