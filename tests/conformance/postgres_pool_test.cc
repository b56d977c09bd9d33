// The PostgreSQL connection pool's bound (pg_pool.h): many threads at once share maxIdle
// connections, a thread holding one is never made to wait, and a connection that cannot be
// opened does not use up a place.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "loom/util/error.h"
#include "postgres/pg_pool.h"
#include "postgres_store_test_support.h"

namespace loom::kernel::conformance {
namespace {

using namespace std::chrono_literals;

class PostgresPoolTest : public PostgresStoreTest {
 protected:
  // A pool of its own (the pools of one url and schema share their connections).
  postgres::Pool pool(std::size_t maxIdle) const {
    return postgres::Pool(options().url + "?application_name=loom_pool_test", options().schema,
                          maxIdle);
  }
  static int64_t backendOf(postgres::Connection& conn) {
    return conn.exec("SELECT pg_backend_pid()::bigint", {}, "test").int64(0, 0);
  }
};

TEST_F(PostgresPoolTest, ManyThreadsAtOnceShareTheBoundsConnections) {
  auto shared = pool(2);
  std::mutex mu;
  std::set<int64_t> backends;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto conn = shared.acquire();
        int64_t backend = backendOf(*conn);
        std::this_thread::sleep_for(1ms);  // held a while, so the threads overlap
        std::lock_guard lock(mu);
        backends.insert(backend);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(backends.size(), 2U) << "8 threads opened connections past the bound of 2";
}

TEST_F(PostgresPoolTest, AThreadWithoutOneWaitsForAConnectionToComeBack) {
  auto shared = pool(1);
  std::optional<postgres::Pool::PoolLease> held(shared.acquire());
  int64_t heldBackend = backendOf(**held);
  std::atomic<bool> got{false};
  std::atomic<int64_t> gotBackend{0};
  std::thread waiter([&] {
    auto conn = shared.acquire();
    got = true;
    gotBackend = backendOf(*conn);
  });
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(got.load()) << "opened a second connection past the bound instead of waiting";
  held.reset();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(heldBackend, gotBackend.load()) << "not the connection that came back";
}

TEST_F(PostgresPoolTest, AThreadHoldingOneOpensAnotherAtOnce) {
  auto shared = pool(1);
  auto outer = shared.acquire();  // a scan whose visitor calls back into its store
  auto started = std::chrono::steady_clock::now();
  auto inner = shared.acquire();
  EXPECT_LT(std::chrono::steady_clock::now() - started, postgres::Pool::kMaxWait / 2);
  EXPECT_NE(backendOf(*outer), backendOf(*inner));
}

TEST_F(PostgresPoolTest, AConnectionThatCannotOpenLeavesItsPlace) {
  postgres::Pool refused("postgresql://127.0.0.1:1/none?connect_timeout=2", options().schema, 1);
  for (int i = 0; i < 3; ++i) {
    auto started = std::chrono::steady_clock::now();
    EXPECT_THROW(refused.acquire(), UnavailableError);
    EXPECT_LT(std::chrono::steady_clock::now() - started, postgres::Pool::kMaxWait / 2)
        << "attempt " << i << " waited for a place a failed open kept";
  }
}

}  // namespace
}  // namespace loom::kernel::conformance
