// The PostgreSQL tables of Loom (docs/spec/postgresql.md) and the codecs between their rows and
// the kernel's values. Tables, in the options' schema:
//   meta(key PK, value)          -- 'schema_version' (kPostgresSchemaVersion), 'event_schema'
//   executions(id PK, workflow, subject, status, started_at, ended_at, next_seq, steps,
//              log_bytes, state_bytes, <the FoldSizes fields>)
//   events(execution_id, seq, body bytea, checksum, PK(execution_id, seq))
//   control(seq PK, body bytea, checksum), INDEX control_by_type(kControlTypeExpression, seq)
//   leases(execution_id PK, owner_id, host, pid, boot_id, pid_namespace, start_ticks, token,
//          acquired_at, renewed_at, expires_at, released)
//   snapshots(execution_id, seq, state bytea, PK(execution_id, seq))
//   blobs(address PK, bytes bytea, size, touched_at)
//   key_store_meta(name PK, value), subject_keys(subject PK, key_id UNIQUE, nonce, wrapped,
//   created_at), subject_key_tombstones(subject PK, shredded_at)   -- the key store
//   kill_switch(effect_id PK, at)
//   subject_blobs(subject, address, put_at, PK(subject, address))   -- the blob ledger
//   archive_segments(name PK, bytes, chunk_bytes, published_at),
//   archive_chunks(segment, chunk, bytes bytea, PK(segment, chunk))  -- retention's archive
// Ids sort bytewise (COLLATE "C"), as in every other store.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loom/kernel/event_store.h"
#include "loom/kernel/execution_info.h"
#include "loom/kernel/lease.h"
#include "pg_connection.h"

namespace loom::postgres::schema {

// A control row's type as its envelope spells it ({"seq":N,"type":"T",...}), read by a regular
// expression over its bytes so that no row can fail it, or '?' for a row that does not start
// so; byte-ordered (COLLATE "C") so the gaps between the known types are index ranges. The
// index control_by_type is over it; a query must spell it the same to use the index.
#define LOOM_PG_CONTROL_TYPE                                                                       \
  "(COALESCE(substring(encode(body, 'escape') from '^\\{\"seq\":[0-9]+,\"type\":\"([A-Z_]+)\"'), " \
  "'?') COLLATE \"C\")"

// Throws FailedPreconditionError unless `conn`'s schema holds tables of
// kPostgresSchemaVersion and an EVENT_SCHEMA this build reads.
void check(Connection& conn);

// The executions columns in row order, for SELECT lists.
#define LOOM_PG_EXECUTION_COLUMNS                                                       \
  "id, workflow, subject, status, started_at, ended_at, next_seq, steps, log_bytes, "   \
  "state_bytes, header_bytes, steps_bytes, steps_count, signals_bytes, signals_count, " \
  "input_bytes, result_bytes, code_version, input_tokens, output_tokens, "               \
  "cached_input_tokens, cost_nano_usd, model_turns"

// The ExecutionInfo of row `row`, whose columns start at `col` with the executions columns.
kernel::ExecutionInfo infoFromRow(const Result& r, int row);
// The executions `filter` selects, by id (one statement: an absent field matches everything).
std::vector<kernel::ExecutionInfo> listInfos(Connection& conn,
                                             const kernel::ExecutionFilter& filter);
std::optional<kernel::ExecutionInfo> readInfo(Connection& conn, const std::string& executionId,
                                              bool forUpdate);
// The values of `info`'s executions row, in LOOM_PG_EXECUTION_COLUMNS order ($1..$23).
std::vector<Param> infoParams(const kernel::ExecutionInfo& info);
void writeInfo(Connection& conn, const kernel::ExecutionInfo& info, bool isNew);

// The lease row of `executionId` (locked for update or share when asked); nullopt: none.
enum class Lock { kNone, kShare, kUpdate };
std::optional<kernel::Lease> readLease(Connection& conn, const std::string& executionId, Lock lock);
void writeLease(Connection& conn, const kernel::Lease& lease, bool isNew);

}  // namespace loom::postgres::schema
