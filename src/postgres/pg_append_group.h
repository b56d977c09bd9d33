// Appends of one event each, from several executions, in one statement (one round trip, one
// commit): what the PostgreSQL event store's group commit sends (kernel/group_commit.h). Each
// append holds only while the execution's metadata row is still exactly the one the store last
// wrote (every column) and, fenced, while its lease is current (read FOR SHARE); its event row
// is inserted only when that update matched. An append that matched nothing (another writer
// appended, the lease moved) wrote nothing: its caller takes the transactional path, which
// says why.
#pragma once

#include <exception>
#include <vector>

#include "kernel/append_plan.h"
#include "loom/kernel/lease.h"
#include "pg_pool.h"

namespace loom::postgres {

struct OneStatementAppend {
  const kernel::ExecutionInfo* known = nullptr;  // the metadata this store last wrote
  kernel::AppendPlan plan;                       // of one event, planned from *known
  const kernel::Lease* fence = nullptr;          // when set, must be the current lease

  // The outcome, set by appendTogether: matched, or not (nothing written), or an error.
  bool matched = false;
  std::exception_ptr error;
};

// Runs `group` (at most one append per execution in one statement; a second one for an
// execution goes in a statement after). A statement the server refused is run again append by
// append, so an error belongs to the append that caused it; a serialization failure or deadlock
// leaves its appends unmatched; a connection lost on the way makes each of its appends an
// UnavailableError saying the outcome is unknown. Never throws.
void appendTogether(Pool& pool, const std::vector<OneStatementAppend*>& group) noexcept;

}  // namespace loom::postgres
