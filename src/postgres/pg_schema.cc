#include "pg_schema.h"

#include <charconv>

#include "loom/kernel/version.h"
#include "loom/postgres/postgres_event_store.h"
#include "pg_pool.h"

namespace loom::postgres {
namespace {

constexpr const char* kCreateTables = R"sql(
CREATE TABLE IF NOT EXISTS meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS executions (
  id text COLLATE "C" PRIMARY KEY,
  workflow text COLLATE "C" NOT NULL,
  subject text COLLATE "C",
  status text NOT NULL,
  started_at bigint NOT NULL,
  ended_at bigint,
  next_seq bigint NOT NULL,
  steps bigint NOT NULL,
  log_bytes bigint NOT NULL,
  state_bytes bigint NOT NULL,
  header_bytes bigint NOT NULL,
  steps_bytes bigint NOT NULL,
  steps_count bigint NOT NULL,
  signals_bytes bigint NOT NULL,
  signals_count bigint NOT NULL,
  input_bytes bigint NOT NULL,
  result_bytes bigint NOT NULL,
  code_version text COLLATE "C",
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  cached_input_tokens bigint NOT NULL DEFAULT 0,
  cost_nano_usd bigint NOT NULL DEFAULT 0,
  model_turns bigint NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS executions_by_workflow ON executions (workflow);
CREATE INDEX IF NOT EXISTS executions_by_subject ON executions (subject);
CREATE INDEX IF NOT EXISTS executions_by_status ON executions (status);
CREATE TABLE IF NOT EXISTS events (
  execution_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  body bytea NOT NULL,
  checksum bigint NOT NULL,
  PRIMARY KEY (execution_id, seq));
CREATE TABLE IF NOT EXISTS control (seq bigint PRIMARY KEY, body bytea NOT NULL,
                                    checksum bigint NOT NULL);
CREATE TABLE IF NOT EXISTS leases (
  execution_id text COLLATE "C" PRIMARY KEY,
  owner_id text NOT NULL,
  host text NOT NULL,
  pid bigint NOT NULL,
  boot_id text NOT NULL,
  pid_namespace text NOT NULL,
  start_ticks bigint NOT NULL,
  token bigint NOT NULL,
  acquired_at bigint NOT NULL,
  renewed_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  released boolean NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (
  execution_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  state bytea NOT NULL,
  PRIMARY KEY (execution_id, seq));
CREATE TABLE IF NOT EXISTS blobs (
  address text COLLATE "C" PRIMARY KEY,
  bytes bytea NOT NULL,
  size bigint NOT NULL,
  touched_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS key_store_meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS subject_keys (
  subject text COLLATE "C" PRIMARY KEY,
  key_id text NOT NULL UNIQUE,
  nonce text NOT NULL,
  wrapped text NOT NULL,
  created_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS subject_key_tombstones (
  subject text COLLATE "C" PRIMARY KEY,
  shredded_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS kill_switch (effect_id text COLLATE "C" PRIMARY KEY, at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS subject_blobs (
  subject text COLLATE "C" NOT NULL,
  address text COLLATE "C" NOT NULL,
  put_at bigint NOT NULL,
  PRIMARY KEY (subject, address));
CREATE INDEX IF NOT EXISTS subject_blobs_by_address ON subject_blobs (address);
CREATE TABLE IF NOT EXISTS archive_segments (
  name text COLLATE "C" PRIMARY KEY,
  bytes bigint NOT NULL,
  chunk_bytes bigint NOT NULL,
  published_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS archive_chunks (
  segment text COLLATE "C" NOT NULL,
  chunk bigint NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (segment, chunk));
CREATE TABLE IF NOT EXISTS workers (
  owner_id text COLLATE "C" PRIMARY KEY,
  host text NOT NULL,
  pid bigint NOT NULL,
  runs text NOT NULL,
  leaves text NOT NULL,
  seen_at bigint NOT NULL,
  expires_at bigint NOT NULL);
DO $$ BEGIN  -- zstd blocks: never compressed again (and no lock taken once it is so)
  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'archive_chunks'::regclass
             AND attname = 'bytes' AND attstorage <> 'e') THEN
    ALTER TABLE archive_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;
  END IF;
END $$;
)sql";

std::optional<int> metaVersion(Connection& conn, const char* key) {
  Result r =
      conn.execDynamic("SELECT value FROM meta WHERE key = $1", {Param::text(key)}, "read meta");
  if (r.rows() == 0) return std::nullopt;
  std::string_view text = r.text(0, 0);
  int version = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw DataLossError("postgresql: meta." + std::string(key) + " is '" + std::string(text) +
                        "', not a version number");
  }
  return version;
}

bool tablesExist(Connection& conn, const std::string& schemaName) {
  Result r = conn.execDynamic(
      "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'meta'",
      {Param::text(schemaName)}, "look for Loom's tables");
  return r.rows() > 0;
}

}  // namespace

void migrate(const PostgresOptions& options) {
  requireIdentifier(options.schema);
  Pool pool(options.url, "public", 1);
  auto conn = pool.acquire();
  conn->run("BEGIN", "begin the migration");
  // One migration at a time, whoever runs it (several workers starting at once).
  conn->execDynamic("SELECT pg_advisory_xact_lock(hashtext($1))",
                    {Param::text("loom migrate " + options.schema)}, "lock the migration");
  const std::string quoted = "\"" + options.schema + "\"";
  conn->execDynamic("CREATE SCHEMA IF NOT EXISTS " + quoted, {}, "create the schema");
  conn->execDynamic("SET LOCAL search_path TO " + quoted, {}, "set the search path");
  if (tablesExist(*conn, options.schema)) {
    auto version = metaVersion(*conn, "schema_version");
    auto events = metaVersion(*conn, "event_schema");
    if ((version && *version > kPostgresSchemaVersion) ||
        (events && *events > loom::EVENT_SCHEMA)) {
      throw FailedPreconditionError(
          "postgresql schema '" + options.schema + "' holds Loom tables of version " +
          std::to_string(version.value_or(0)) + " (EVENT_SCHEMA " +
          std::to_string(events.value_or(0)) + "); this build knows version " +
          std::to_string(kPostgresSchemaVersion) + " (EVENT_SCHEMA " +
          std::to_string(loom::EVENT_SCHEMA) + "): upgrade Loom, never downgrade a schema");
    }
  }
  conn->run(kCreateTables, "create Loom's tables");
  // Version 4: a schema of 3 gets the column; its rows keep NULL (none recorded).
  conn->run("ALTER TABLE executions ADD COLUMN IF NOT EXISTS code_version text COLLATE \"C\"",
            "add executions.code_version");
  // Version 6: the usage columns; the runs of a schema of 5 recorded none.
  conn->run(
      "ALTER TABLE executions ADD COLUMN IF NOT EXISTS input_tokens bigint NOT NULL DEFAULT 0, "
      "ADD COLUMN IF NOT EXISTS output_tokens bigint NOT NULL DEFAULT 0, "
      "ADD COLUMN IF NOT EXISTS cached_input_tokens bigint NOT NULL DEFAULT 0, "
      "ADD COLUMN IF NOT EXISTS cost_nano_usd bigint NOT NULL DEFAULT 0, "
      "ADD COLUMN IF NOT EXISTS model_turns bigint NOT NULL DEFAULT 0",
      "add the executions' usage columns");
  conn->run("CREATE INDEX IF NOT EXISTS control_by_type ON control (" LOOM_PG_CONTROL_TYPE ", seq)",
            "index the control log by type");
  conn->execDynamic(
      "INSERT INTO meta (key, value) VALUES ('schema_version', $1), ('event_schema', $2) "
      "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      {Param::text(std::to_string(kPostgresSchemaVersion)),
       Param::text(std::to_string(loom::EVENT_SCHEMA))},
      "record the schema version");
  conn->run("COMMIT", "commit the migration");
}

namespace schema {

void check(Connection& conn) {
  std::optional<int> version;
  std::optional<int> events;
  try {
    version = metaVersion(conn, "schema_version");
    events = metaVersion(conn, "event_schema");
  } catch (const FailedPreconditionError&) {
    // No meta table: never migrated.
  }
  if (!version || !events) {
    throw FailedPreconditionError(
        "the postgresql schema holds no Loom tables (or was never migrated): run `loom db "
        "migrate` against this url first");
  }
  if (*version != kPostgresSchemaVersion) {
    throw FailedPreconditionError(
        "the postgresql schema holds Loom tables of version " + std::to_string(*version) +
        " but this build uses version " + std::to_string(kPostgresSchemaVersion) +
        (*version > kPostgresSchemaVersion ? ": upgrade Loom" : ": run `loom db migrate`"));
  }
  // An older EVENT_SCHEMA is raised by the migration first: this build writes its own
  // events, which a build that knows only the older schema must refuse.
  if (*events != loom::EVENT_SCHEMA) {
    throw FailedPreconditionError(
        "the postgresql schema was written under EVENT_SCHEMA " + std::to_string(*events) +
        " but this build writes EVENT_SCHEMA " + std::to_string(loom::EVENT_SCHEMA) +
        (*events > loom::EVENT_SCHEMA ? ": upgrade Loom" : ": run `loom db migrate`"));
  }
}

kernel::ExecutionInfo infoFromRow(const Result& r, int row) {
  kernel::ExecutionInfo info;
  info.id = std::string(r.text(row, 0));
  info.workflow = std::string(r.text(row, 1));
  info.subject = r.optionalText(row, 2);
  auto status = kernel::statusFromName(r.text(row, 3));
  if (!status) {
    throw DataLossError("execution '" + info.id + "' has an unknown status '" +
                        std::string(r.text(row, 3)) + "' in its metadata row");
  }
  info.status = *status;
  info.startedAtMillis = r.int64(row, 4);
  info.endedAtMillis = r.optionalInt64(row, 5);
  info.nextSeq = r.int64(row, 6);
  info.steps = r.int64(row, 7);
  info.logBytes = r.int64(row, 8);
  info.stateBytes = r.int64(row, 9);
  info.sizes.headerBytes = r.int64(row, 10);
  info.sizes.stepsBytes = r.int64(row, 11);
  info.sizes.stepsCount = r.int64(row, 12);
  info.sizes.signalsBytes = r.int64(row, 13);
  info.sizes.signalsCount = r.int64(row, 14);
  info.sizes.inputBytes = r.int64(row, 15);
  info.sizes.resultBytes = r.int64(row, 16);
  info.codeVersion = r.optionalText(row, 17);
  info.usage = {r.int64(row, 18), r.int64(row, 19), r.int64(row, 20), r.int64(row, 21),
                r.int64(row, 22)};
  return info;
}

std::optional<kernel::ExecutionInfo> readInfo(Connection& conn, const std::string& executionId,
                                              bool forUpdate) {
  static const char* kSelect = "SELECT " LOOM_PG_EXECUTION_COLUMNS " FROM executions WHERE id = $1";
  static const char* kSelectForUpdate =
      "SELECT " LOOM_PG_EXECUTION_COLUMNS " FROM executions WHERE id = $1 FOR UPDATE";
  Result r = conn.exec(forUpdate ? kSelectForUpdate : kSelect, {Param::text(executionId)},
                       "read execution metadata");
  if (r.rows() == 0) return std::nullopt;
  return infoFromRow(r, 0);
}

std::vector<kernel::ExecutionInfo> listInfos(Connection& conn,
                                             const kernel::ExecutionFilter& filter) {
  // One statement for every filter: an absent field binds NULL and matches everything.
  Result r = conn.exec("SELECT " LOOM_PG_EXECUTION_COLUMNS
                     " FROM executions WHERE id > $1 AND ($2::text IS NULL OR workflow = $2)"
                     " AND ($3::text IS NULL OR subject = $3) AND ($4::text IS NULL OR status = $4)"
                     " AND ($5::bigint IS NULL OR (ended_at IS NOT NULL AND ended_at < $5))"
                     " ORDER BY id LIMIT $6",
                     {Param::text(filter.afterId), Param::optionalText(filter.workflow),
                      Param::optionalText(filter.subject),
                      Param::optionalText(filter.status ? std::optional<std::string>(std::string(
                                                              kernel::statusName(*filter.status)))
                                                        : std::nullopt),
                      Param::optionalInt64(filter.endedBeforeMillis),
                      Param::optionalInt64(
                          filter.limit == 0 ? std::nullopt : std::optional<int64_t>(filter.limit))},
                     "list executions");
  std::vector<kernel::ExecutionInfo> out;
  out.reserve(static_cast<std::size_t>(r.rows()));
  for (int row = 0; row < r.rows(); ++row) out.push_back(infoFromRow(r, row));
  return out;
}

std::vector<Param> infoParams(const kernel::ExecutionInfo& info) {
  return {Param::text(info.id),
          Param::text(info.workflow),
          Param::optionalText(info.subject),
          Param::text(kernel::statusName(info.status)),
          Param::int64(info.startedAtMillis),
          Param::optionalInt64(info.endedAtMillis),
          Param::int64(info.nextSeq),
          Param::int64(info.steps),
          Param::int64(info.logBytes),
          Param::int64(info.stateBytes),
          Param::int64(info.sizes.headerBytes),
          Param::int64(info.sizes.stepsBytes),
          Param::int64(info.sizes.stepsCount),
          Param::int64(info.sizes.signalsBytes),
          Param::int64(info.sizes.signalsCount),
          Param::int64(info.sizes.inputBytes),
          Param::int64(info.sizes.resultBytes),
          Param::optionalText(info.codeVersion),
          Param::int64(info.usage.inputTokens),
          Param::int64(info.usage.outputTokens),
          Param::int64(info.usage.cachedInputTokens),
          Param::int64(info.usage.costNanoUsd),
          Param::int64(info.usage.modelTurns)};
}

void writeInfo(Connection& conn, const kernel::ExecutionInfo& info, bool isNew) {
  static const char* kInsert =
      "INSERT INTO executions (" LOOM_PG_EXECUTION_COLUMNS
      ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, "
      "$18, $19, $20, $21, $22, $23)";
  // workflow, subject and started_at are fixed by EXECUTION_STARTED; code_version moves with
  // CODE_UPGRADED.
  static const char* kUpdate =
      "UPDATE executions SET status = $4, ended_at = $6, next_seq = $7, steps = $8, "
      "log_bytes = $9, state_bytes = $10, header_bytes = $11, steps_bytes = $12, "
      "steps_count = $13, signals_bytes = $14, signals_count = $15, input_bytes = $16, "
      "result_bytes = $17, code_version = $18, input_tokens = $19, output_tokens = $20, "
      "cached_input_tokens = $21, cost_nano_usd = $22, model_turns = $23 WHERE id = $1 "
      "AND workflow = $2 "
      "AND subject IS NOT DISTINCT FROM $3 AND started_at = $5";
  Result r = conn.exec(isNew ? kInsert : kUpdate, infoParams(info), "write execution metadata");
  if (!isNew && r.changed() != 1) {
    throw DataLossError("execution '" + info.id +
                        "': its metadata row changed under the append (workflow, subject or "
                        "start time differ from its log); restore the database from a backup");
  }
}

std::optional<kernel::Lease> readLease(Connection& conn, const std::string& executionId,
                                       Lock lock) {
#define LOOM_PG_LEASE_SELECT                                                          \
  "SELECT owner_id, host, pid, boot_id, token, acquired_at, renewed_at, expires_at, " \
  "released, pid_namespace, start_ticks FROM leases WHERE execution_id = $1"
  static const char* kPlain = LOOM_PG_LEASE_SELECT;
  static const char* kShare = LOOM_PG_LEASE_SELECT " FOR SHARE";
  static const char* kUpdate = LOOM_PG_LEASE_SELECT " FOR UPDATE";
#undef LOOM_PG_LEASE_SELECT
  const char* sql = lock == Lock::kNone ? kPlain : lock == Lock::kShare ? kShare : kUpdate;
  Result r = conn.exec(sql, {Param::text(executionId)}, "read a lease");
  if (r.rows() == 0) return std::nullopt;
  kernel::Lease lease;
  lease.executionId = executionId;
  lease.owner.id = std::string(r.text(0, 0));
  lease.owner.host = std::string(r.text(0, 1));
  lease.owner.pid = r.int64(0, 2);
  lease.owner.bootId = std::string(r.text(0, 3));
  lease.token = r.int64(0, 4);
  lease.acquiredAtMillis = r.int64(0, 5);
  lease.renewedAtMillis = r.int64(0, 6);
  lease.expiresAtMillis = r.int64(0, 7);
  lease.released = r.boolean(0, 8);
  lease.owner.pidNamespace = std::string(r.text(0, 9));
  lease.owner.startTicks = r.int64(0, 10);
  return lease;
}

void writeLease(Connection& conn, const kernel::Lease& lease, bool isNew) {
  static const char* kInsert =
      "INSERT INTO leases (execution_id, owner_id, host, pid, boot_id, token, acquired_at, "
      "renewed_at, expires_at, released, pid_namespace, start_ticks) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
  static const char* kUpdate =
      "UPDATE leases SET owner_id = $2, host = $3, pid = $4, boot_id = $5, token = $6, "
      "acquired_at = $7, renewed_at = $8, expires_at = $9, released = $10, "
      "pid_namespace = $11, start_ticks = $12 WHERE execution_id = $1";
  conn.exec(
      isNew ? kInsert : kUpdate,
      {Param::text(lease.executionId), Param::text(lease.owner.id), Param::text(lease.owner.host),
       Param::int64(lease.owner.pid), Param::text(lease.owner.bootId), Param::int64(lease.token),
       Param::int64(lease.acquiredAtMillis), Param::int64(lease.renewedAtMillis),
       Param::int64(lease.expiresAtMillis), Param::boolean(lease.released),
       Param::text(lease.owner.pidNamespace), Param::int64(lease.owner.startTicks)},
      "write a lease");
}

}  // namespace schema
}  // namespace loom::postgres
