// Worker presence in a PostgreSQL schema (PostgresEventStore::announceWorker, liveWorkers;
// docs/spec/leases.md "Workers"): table `workers`, at the server's time (or `clock`'s when a
// test gives one).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "loom/kernel/lease.h"
#include "loom/util/clock.h"
#include "pg_pool.h"

namespace loom::postgres {

void writeWorker(Pool& pool, const std::shared_ptr<const Clock>& clock,
                 const kernel::WorkerPresence& presence, int64_t ttlMillis);
std::vector<kernel::WorkerPresence> readLiveWorkers(Pool& pool,
                                                    const std::shared_ptr<const Clock>& clock);

}  // namespace loom::postgres
