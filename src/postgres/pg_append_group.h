// Appends of one event each, from several executions, in one statement (one round trip, one
// commit): what the PostgreSQL event store's group commit sends (kernel/group_commit.h). Each
// append holds only while the execution's metadata row is still exactly the one the store last
// wrote (every column) and, fenced, while its lease is current (read FOR SHARE); its event row
// is inserted only when that update matched, and an append that ends its execution releases
// its lease in the same statement. An append that matched nothing (another writer
// appended, the lease moved) wrote nothing: its caller takes the transactional path, which
// says why.
#pragma once

#include <exception>
#include <optional>
#include <vector>

#include "kernel/append_plan.h"
#include "loom/kernel/lease.h"
#include "pg_pool.h"

namespace loom::postgres {

struct OneStatementAppend {
  const kernel::ExecutionInfo* known = nullptr;  // the metadata this store last wrote
  kernel::AppendPlan plan;                       // of one event, planned from *known
  const kernel::Lease* fence = nullptr;          // when set, must be the current lease
  // Releases `fence` in the same statement when the append matched (the append ends the
  // execution: its runner would release it next).
  bool releaseLease = false;

  // The outcome, set by AppendGroups::run: matched, or not (nothing written), or an error.
  bool matched = false;
  std::exception_ptr error;
};

// The leader's side of the store's group commit: runs each group on a connection it keeps
// between groups (taken from the pool; replaced when the server dropped it), so queued appends
// never wait for a connection to open. One leader at a time (the queue sees to it).
class AppendGroups {
 public:
  explicit AppendGroups(Pool& pool) : pool_(pool) {}

  // Runs `group`: at most one append per execution in one statement (a second one for an
  // execution goes in a statement after). A statement the server refused (an error of one
  // row, a lock or statement timeout) is run again append by append, so the error belongs to
  // the append that caused it; a serialization failure or deadlock leaves its appends
  // unmatched; no connection, or one lost on the way (outcome unknown), is each append's
  // UnavailableError. Never throws (an allocation failure after a commit terminates rather
  // than report recorded appends as missed).
  void run(const std::vector<OneStatementAppend*>& group) noexcept;

 private:
  void runRound(const std::vector<OneStatementAppend*>& round) noexcept;
  Connection& connection();

  Pool& pool_;
  std::optional<Pool::PoolLease> held_;
};

}  // namespace loom::postgres
