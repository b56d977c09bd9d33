#include "sqlite_schema.h"

#include <charconv>

#include "loom/kernel/version.h"
#include "loom/util/error.h"

namespace loom::kernel::schema {
namespace {

constexpr const char* kCreateMeta =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";

constexpr const char* kCreateTables = R"sql(
CREATE TABLE IF NOT EXISTS executions (
  id TEXT PRIMARY KEY,
  workflow TEXT NOT NULL,
  subject TEXT,
  status TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  next_seq INTEGER NOT NULL,
  steps INTEGER NOT NULL,
  log_bytes INTEGER NOT NULL,
  state_bytes INTEGER NOT NULL,
  header_bytes INTEGER NOT NULL,
  steps_bytes INTEGER NOT NULL,
  steps_count INTEGER NOT NULL,
  signals_bytes INTEGER NOT NULL,
  signals_count INTEGER NOT NULL,
  input_bytes INTEGER NOT NULL,
  result_bytes INTEGER NOT NULL,
  code_version TEXT,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cached_input_tokens INTEGER NOT NULL DEFAULT 0,
  cost_nano_usd INTEGER NOT NULL DEFAULT 0,
  model_turns INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS executions_by_workflow ON executions (workflow);
CREATE INDEX IF NOT EXISTS executions_by_subject ON executions (subject);
CREATE TABLE IF NOT EXISTS events (
  execution_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  body TEXT NOT NULL,
  checksum INTEGER,
  PRIMARY KEY (execution_id, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS control (seq INTEGER PRIMARY KEY, body TEXT NOT NULL,
                                    checksum INTEGER);
CREATE TABLE IF NOT EXISTS leases (
  execution_id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  boot_id TEXT NOT NULL,
  pid_namespace TEXT NOT NULL,
  start_ticks INTEGER NOT NULL,
  token INTEGER NOT NULL,
  acquired_at INTEGER NOT NULL,
  renewed_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  released INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS workers (
  owner_id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  runs TEXT NOT NULL,
  leaves TEXT NOT NULL,
  seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL);
)sql";

// Databases written before rows carried a checksum get the column; their old rows keep NULL
// there and stay readable.
void addChecksumColumns(Db& db) {
  if (!db.hasColumn("events", "checksum")) {
    db.exec("ALTER TABLE events ADD COLUMN checksum INTEGER", "add events.checksum");
  }
  if (!db.hasColumn("control", "checksum")) {
    db.exec("ALTER TABLE control ADD COLUMN checksum INTEGER", "add control.checksum");
  }
}

// Databases written before EVENT_SCHEMA 3 get the code version column; their rows keep NULL
// there (a run with none recorded, which any worker may claim and whose runtime then checks
// the version its log recorded: docs/adr/0029-runs-pinned-to-their-code.md).
void addCodeVersionColumn(Db& db) {
  if (!db.hasColumn("executions", "code_version")) {
    db.exec("ALTER TABLE executions ADD COLUMN code_version TEXT", "add executions.code_version");
  }
}

// Databases written before EVENT_SCHEMA 5 get the usage columns (their runs recorded none).
void addUsageColumns(Db& db) {
  for (const char* column :
       {"input_tokens", "output_tokens", "cached_input_tokens", "cost_nano_usd", "model_turns"}) {
    if (db.hasColumn("executions", column)) continue;
    std::string sql =
        "ALTER TABLE executions ADD COLUMN " + std::string(column) + " INTEGER NOT NULL DEFAULT 0";
    db.exec(sql.c_str(), "add a usage column to executions");
  }
}

// Checks the recorded EVENT_SCHEMA, recording ours in a new database (and in one of an older
// schema this build reads).
void checkEventSchema(Db& db) {
  StatementUse select(db.prepare("SELECT value FROM meta WHERE key = 'event_schema'"));
  if (!select->step("read meta.event_schema")) {
    StatementUse insert(db.prepare("INSERT INTO meta (key, value) VALUES ('event_schema', ?1)"));
    insert->bind(1, std::string_view(std::to_string(EVENT_SCHEMA)));
    insert->step("write meta.event_schema");
    return;
  }
  std::string_view text = select->text(0);
  int version = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw DataLossError("sqlite database '" + db.path() + "': meta.event_schema is '" +
                        std::string(text) + "', not a version number");
  }
  if (version > EVENT_SCHEMA || version < EVENT_SCHEMA_OLDEST_READABLE) {
    throw FailedPreconditionError(
        "sqlite database '" + db.path() + "' was written under EVENT_SCHEMA " +
        std::to_string(version) + " but this build reads EVENT_SCHEMA " +
        std::to_string(EVENT_SCHEMA_OLDEST_READABLE) + " to " + std::to_string(EVENT_SCHEMA) +
        (version > EVENT_SCHEMA ? "; upgrade Loom to open it" : ""));
  }
  if (version < EVENT_SCHEMA) {
    // Every older schema this build reads is a subset of ours: from now on this database may
    // hold events of ours, so a build that knows only the older one must refuse it.
    StatementUse update(db.prepare("UPDATE meta SET value = ?1 WHERE key = 'event_schema'"));
    update->bind(1, std::string_view(std::to_string(EVENT_SCHEMA)));
    update->step("upgrade meta.event_schema");
  }
}

}  // namespace

const char* const kControlTypeExpression =
    "CASE WHEN json_valid(body) AND json_type(body, '$.type') = 'text' "
    "THEN json_extract(body, '$.type') ELSE '?' END";

const char* const kExecutionColumns =
    "id, workflow, subject, status, started_at, ended_at, next_seq, steps, log_bytes, "
    "state_bytes, header_bytes, steps_bytes, steps_count, signals_bytes, signals_count, "
    "input_bytes, result_bytes, code_version, input_tokens, output_tokens, cached_input_tokens, "
    "cost_nano_usd, model_turns";

void prepareSchema(Db& db) {
  // journal_mode is persistent in the file and cannot change inside a transaction.
  db.useWal();
  db.exec("BEGIN IMMEDIATE", "begin schema transaction");
  try {
    db.exec(kCreateMeta, "create table meta");
    checkEventSchema(db);
    db.exec(kCreateTables, "create tables");
    addChecksumColumns(db);
    addCodeVersionColumn(db);
    addUsageColumns(db);
    // Built once over an older home's control log, in this transaction.
    db.exec((std::string("CREATE INDEX IF NOT EXISTS control_by_type ON control ((") +
             kControlTypeExpression + "), seq)")
                .c_str(),
            "index the control log by type");
    // What a worker claims: the running executions, oldest first (sqlite_work.h).
    db.exec("CREATE INDEX IF NOT EXISTS executions_by_status ON executions (status, started_at)",
            "index the executions by status");
    db.exec("COMMIT", "commit schema");
  } catch (...) {
    // The error being thrown is the one to report; a failed rollback leaves nothing to undo.
    if (db.inTransaction()) db.execNoThrow("ROLLBACK");
    throw;
  }
}

ExecutionInfo infoFromRow(const Statement& row) {
  ExecutionInfo info;
  info.id = std::string(row.text(0));
  info.workflow = std::string(row.text(1));
  if (!row.isNull(2)) info.subject = std::string(row.text(2));
  auto status = statusFromName(row.text(3));
  if (!status) {
    throw DataLossError("execution '" + info.id + "' has an unknown status '" +
                        std::string(row.text(3)) + "' in its metadata row");
  }
  info.status = *status;
  info.startedAtMillis = row.int64(4);
  if (!row.isNull(5)) info.endedAtMillis = row.int64(5);
  info.nextSeq = row.int64(6);
  info.steps = row.int64(7);
  info.logBytes = row.int64(8);
  info.stateBytes = row.int64(9);
  info.sizes.headerBytes = row.int64(10);
  info.sizes.stepsBytes = row.int64(11);
  info.sizes.stepsCount = row.int64(12);
  info.sizes.signalsBytes = row.int64(13);
  info.sizes.signalsCount = row.int64(14);
  info.sizes.inputBytes = row.int64(15);
  info.sizes.resultBytes = row.int64(16);
  if (!row.isNull(17)) info.codeVersion = std::string(row.text(17));
  info.usage = {row.int64(18), row.int64(19), row.int64(20), row.int64(21), row.int64(22)};
  return info;
}

void writeInfo(Db& db, const ExecutionInfo& info) {
  StatementUse upsert(db.prepare(
      "INSERT INTO executions (id, workflow, subject, status, started_at, ended_at, "
      "next_seq, steps, log_bytes, state_bytes, header_bytes, steps_bytes, steps_count, "
      "signals_bytes, signals_count, input_bytes, result_bytes, code_version, input_tokens, "
      "output_tokens, cached_input_tokens, cost_nano_usd, model_turns) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
      "?19, ?20, ?21, ?22, ?23) "
      // workflow, subject and started_at are fixed by EXECUTION_STARTED: leaving them out of
      // the update leaves their indexes untouched on every append. code_version (no index)
      // moves with CODE_UPGRADED.
      "ON CONFLICT (id) DO UPDATE SET status = excluded.status, ended_at = excluded.ended_at, "
      "next_seq = excluded.next_seq, steps = excluded.steps, log_bytes = excluded.log_bytes, "
      "state_bytes = excluded.state_bytes, header_bytes = excluded.header_bytes, "
      "steps_bytes = excluded.steps_bytes, steps_count = excluded.steps_count, "
      "signals_bytes = excluded.signals_bytes, signals_count = excluded.signals_count, "
      "input_bytes = excluded.input_bytes, result_bytes = excluded.result_bytes, "
      "code_version = excluded.code_version, input_tokens = excluded.input_tokens, "
      "output_tokens = excluded.output_tokens, cached_input_tokens = "
      "excluded.cached_input_tokens, cost_nano_usd = excluded.cost_nano_usd, "
      "model_turns = excluded.model_turns"));
  upsert->bind(1, std::string_view(info.id));
  upsert->bind(2, std::string_view(info.workflow));
  upsert->bind(3, info.subject);
  upsert->bind(4, statusName(info.status));
  upsert->bind(5, info.startedAtMillis);
  upsert->bind(6, info.endedAtMillis);
  upsert->bind(7, info.nextSeq);
  upsert->bind(8, info.steps);
  upsert->bind(9, info.logBytes);
  upsert->bind(10, info.stateBytes);
  upsert->bind(11, info.sizes.headerBytes);
  upsert->bind(12, info.sizes.stepsBytes);
  upsert->bind(13, info.sizes.stepsCount);
  upsert->bind(14, info.sizes.signalsBytes);
  upsert->bind(15, info.sizes.signalsCount);
  upsert->bind(16, info.sizes.inputBytes);
  upsert->bind(17, info.sizes.resultBytes);
  upsert->bind(18, info.codeVersion);
  upsert->bind(19, info.usage.inputTokens);
  upsert->bind(20, info.usage.outputTokens);
  upsert->bind(21, info.usage.cachedInputTokens);
  upsert->bind(22, info.usage.costNanoUsd);
  upsert->bind(23, info.usage.modelTurns);
  upsert->step("write execution metadata");
}

std::optional<ExecutionInfo> readInfo(Db& db, const std::string& executionId) {
  static const std::string kSql =
      std::string("SELECT ") + kExecutionColumns + " FROM executions WHERE id = ?1";
  StatementUse select(db.prepare(kSql.c_str()));
  select->bind(1, std::string_view(executionId));
  if (!select->step("read execution metadata")) return std::nullopt;
  return infoFromRow(*select);
}

std::optional<Lease> readLease(Db& db, const std::string& executionId) {
  StatementUse select(
      db.prepare("SELECT owner_id, host, pid, boot_id, token, acquired_at, renewed_at, "
                 "expires_at, released, pid_namespace, start_ticks FROM leases "
                 "WHERE execution_id = ?1"));
  select->bind(1, std::string_view(executionId));
  if (!select->step("read a lease")) return std::nullopt;
  Lease lease;
  lease.executionId = executionId;
  lease.owner.id = std::string(select->text(0));
  lease.owner.host = std::string(select->text(1));
  lease.owner.pid = select->int64(2);
  lease.owner.bootId = std::string(select->text(3));
  lease.token = select->int64(4);
  lease.acquiredAtMillis = select->int64(5);
  lease.renewedAtMillis = select->int64(6);
  lease.expiresAtMillis = select->int64(7);
  lease.released = select->int64(8) != 0;
  lease.owner.pidNamespace = std::string(select->text(9));
  lease.owner.startTicks = select->int64(10);
  return lease;
}

bool holdsLease(Db& db, const Lease& lease) {
  StatementUse select(
      db.prepare("SELECT token, owner_id, released FROM leases WHERE execution_id = ?1"));
  select->bind(1, std::string_view(lease.executionId));
  if (!select->step("read a lease")) return false;
  return select->int64(0) == lease.token && select->text(1) == lease.owner.id &&
         select->int64(2) == 0;
}

void writeLease(Db& db, const Lease& lease) {
  StatementUse upsert(
      db.prepare("INSERT OR REPLACE INTO leases (execution_id, owner_id, host, pid, boot_id, "
                 "token, acquired_at, renewed_at, expires_at, released, pid_namespace, "
                 "start_ticks) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"));
  upsert->bind(1, std::string_view(lease.executionId));
  upsert->bind(2, std::string_view(lease.owner.id));
  upsert->bind(3, std::string_view(lease.owner.host));
  upsert->bind(4, lease.owner.pid);
  upsert->bind(5, std::string_view(lease.owner.bootId));
  upsert->bind(6, lease.token);
  upsert->bind(7, lease.acquiredAtMillis);
  upsert->bind(8, lease.renewedAtMillis);
  upsert->bind(9, lease.expiresAtMillis);
  upsert->bind(10, int64_t{lease.released ? 1 : 0});
  upsert->bind(11, std::string_view(lease.owner.pidNamespace));
  upsert->bind(12, lease.owner.startTicks);
  upsert->step("write a lease");
}

void removeLease(Db& db, const std::string& executionId) {
  StatementUse remove(db.prepare("DELETE FROM leases WHERE execution_id = ?1"));
  remove->bind(1, std::string_view(executionId));
  remove->step("remove a lease");
}

}  // namespace loom::kernel::schema
