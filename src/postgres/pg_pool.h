// A pool of connections to one server and schema. acquire() hands out an idle connection or
// opens a new one (it never waits, so a caller holding one may take another: a scan's visitor
// calling back into its store); a connection comes back when its PoolLease ends, rolled back
// if a transaction was left open, and is dropped when broken or when maxIdle are idle already.
// Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pg_connection.h"

namespace loom::postgres {

class Pool {
 public:
  Pool(std::string url, std::string schema, std::size_t maxIdle);

  class PoolLease {
   public:
    PoolLease(Pool& pool, std::unique_ptr<Connection> conn)
        : pool_(&pool), conn_(std::move(conn)) {}
    PoolLease(PoolLease&&) = default;
    ~PoolLease();
    Connection& operator*() const { return *conn_; }
    Connection* operator->() const { return conn_.get(); }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> conn_;
  };

  PoolLease acquire();
  const std::string& schema() const { return schema_; }

 private:
  void giveBack(std::unique_ptr<Connection> conn);

  const std::string url_;
  const std::string schema_;
  const std::size_t maxIdle_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

// Runs `body(connection)` in a transaction (`begin` is its BEGIN statement) and commits;
// rolls back and rethrows what it throws. A RetryTransaction (serialization failure, deadlock)
// runs it again, up to 20 times. Returns what `body` returns.
template <typename Body>
auto inTransaction(Pool& pool, const char* begin, Body&& body) {
  for (int attempt = 1;; ++attempt) {
    auto conn = pool.acquire();
    try {
      conn->run(begin, "begin a transaction");
      if constexpr (std::is_void_v<decltype(body(*conn))>) {
        body(*conn);
        conn->run("COMMIT", "commit");
        return;
      } else {
        auto out = body(*conn);
        conn->run("COMMIT", "commit");
        return out;
      }
    } catch (const RetryTransaction&) {
      if (attempt >= 20) throw;
    }
  }
}

}  // namespace loom::postgres
