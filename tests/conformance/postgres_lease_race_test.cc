// A takeover racing the holder's appends on PostgreSQL, across two stores (two machines): the
// lease fence of the one-statement append must order every append against the takeover.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "event_store_conformance.h"
#include "loom/postgres/postgres_event_store.h"
#include "loom/util/error.h"
#include "postgres_store_test_support.h"

namespace loom::kernel::conformance {
namespace {

using PostgresLeaseRaceTest = PostgresStoreTest;

// A takeover while the holder appends: once the takeover returned, nothing of the old holder
// lands (each one-statement append reads the lease row FOR SHARE, which a takeover's FOR UPDATE
// waits for, and after it the append finds the new lease), and the new holder appends where
// the log ends.
TEST_F(PostgresLeaseRaceTest, NoAppendOfTheOldHolderLandsAfterATakeoverReturned) {
  postgres::migrate(options());
  postgres::PostgresEventStore store(options());
  postgres::PostgresEventStore taker(options());  // another machine
  for (int round = 0; round < 5; ++round) {
    const std::string id = "raced" + std::to_string(round);
    Lease old = store.acquireLease({id, LeaseOwner{"r", "h", 1, "b", "ns", 1}, 60'000, {}});
    int64_t next = store.appendLeased(old, 1, {started()});
    std::atomic<bool> stopped{false}, takenOver{false};
    std::atomic<int64_t> appended{0}, landedAfter{0};
    std::string unexpected;
    std::thread holder([&] {
      for (int i = 0;; ++i) {
        const bool after = takenOver.load();  // the takeover had returned before this began
        try {
          next = store.appendLeased(old, next, {step("s" + std::to_string(i))});
          ++appended;
          if (after) ++landedAfter;
        } catch (const kernel::LeaseLostError&) {
          break;
        } catch (const ConflictError&) {
          break;
        } catch (const std::exception& e) {
          unexpected = e.what();
          break;
        }
      }
      stopped = true;
    });
    while (appended < 3 + round * 7 && !stopped) std::this_thread::yield();
    Lease fresh = taker.acquireLease(
        {id, LeaseOwner{"t", "h", 2, "b", "ns", 2}, 60'000, std::optional<int64_t>(old.token)});
    takenOver = true;
    const int64_t atTakeover = taker.info(id)->nextSeq;
    holder.join();
    EXPECT_EQ(unexpected, "");
    EXPECT_EQ(landedAfter, 0) << "an append begun after the takeover returned landed";
    EXPECT_EQ(atTakeover, taker.info(id)->nextSeq) << "the old holder appended after the takeover";
    EXPECT_EQ(atTakeover + 1, taker.appendLeased(fresh, atTakeover, {step("after")}));
  }
}

}  // namespace
}  // namespace loom::kernel::conformance
