// The SQLite event store's schema: its tables, the EVENT_SCHEMA check on open, and the codec
// between an executions row and ExecutionInfo. Tables:
//   meta(key PK, value)                    -- 'event_schema' = the EVENT_SCHEMA that wrote it
//   executions(id PK, workflow, subject, status, started_at, ended_at, next_seq, steps,
//              log_bytes, state_bytes, <the FoldSizes fields>)
//   events(execution_id, seq, body, checksum, PK(execution_id, seq)) WITHOUT ROWID
//   control(seq PK, body, checksum), index control_by_type(kControlTypeExpression, seq)
//   leases(execution_id PK, owner_id, host, pid, boot_id, pid_namespace, start_ticks, token,
//          acquired_at, renewed_at, expires_at, released)  -- docs/spec/leases.md
// checksum is log_check.h's rowChecksum of the row; NULL in rows written before it existed.
// Thread-safety: free functions over a Db the caller uses exclusively.
#pragma once

#include <optional>
#include <string>

#include "loom/kernel/execution_info.h"
#include "loom/kernel/lease.h"
#include "util/sqlite_db.h"

namespace loom::kernel::schema {

using loom::sqlite::Db;
using loom::sqlite::Statement;
using loom::sqlite::StatementUse;

// A control row's type as its index holds it: the body's "type", or '?' when the body is not
// JSON with a string type. Every typed read also returns the rows indexed under no known type
// ('?', or a type a flipped byte changed) so that they throw (sqlite_control_reads.h). A body
// changed into JSON of another known type is indexed under that type: only readControl, which
// checks every row's checksum, sees it.
extern const char* const kControlTypeExpression;

// Puts the database in WAL mode, creates the tables when missing and records EVENT_SCHEMA in
// a new database, adding the checksum columns to a database written before them. Throws
// FailedPreconditionError naming both versions when the database was written under an EVENT_SCHEMA
// this build cannot read (newer, or older than the oldest readable); the mapped SQLite error
// otherwise. Run on the write connection before any other.
void prepareSchema(Db& db);

// The executions columns in row order, for SELECT lists.
extern const char* const kExecutionColumns;
// The number of kExecutionColumns.
inline constexpr int kExecutionColumnCount = 18;

// Reads the ExecutionInfo of the current row, whose columns start with kExecutionColumns.
ExecutionInfo infoFromRow(const Statement& row);

// Inserts or updates the executions row of `info` (an update keeps workflow, subject and
// started_at, which EXECUTION_STARTED fixed).
void writeInfo(Db& db, const ExecutionInfo& info);

// The metadata of `executionId` as `db` sees it; nullopt when it does not exist.
std::optional<ExecutionInfo> readInfo(Db& db, const std::string& executionId);

// The lease row of `executionId`; nullopt when there is none.
std::optional<Lease> readLease(Db& db, const std::string& executionId);
// isCurrentLease(readLease(db, lease.executionId), lease), reading three columns and copying
// nothing: the fence of every leased append.
bool holdsLease(Db& db, const Lease& lease);
// Inserts or replaces the lease row of lease.executionId.
void writeLease(Db& db, const Lease& lease);
// Deletes the lease row of `executionId` (with its log).
void removeLease(Db& db, const std::string& executionId);

}  // namespace loom::kernel::schema
