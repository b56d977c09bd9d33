#include "pg_append_group.h"

#include <string>
#include <unordered_set>

#include "kernel/log_check.h"

namespace loom::postgres {
namespace {

using kernel::ExecutionInfo;

// The same rule for one append, its values as scalars in the same order ($20: the lease's
// token, NULL when unfenced; $37..$41: the usage after it).
constexpr const char* kOneSql =
    "WITH fence AS (SELECT 1 FROM leases WHERE execution_id = $1 AND token = $20 "
    "AND owner_id = $21 AND NOT released FOR SHARE), "
    "upd AS (UPDATE executions SET status = $2, ended_at = $3, next_seq = $4, steps = $5, "
    "log_bytes = $6, state_bytes = $7, header_bytes = $8, steps_bytes = $9, "
    "steps_count = $10, signals_bytes = $11, signals_count = $12, input_bytes = $13, "
    "result_bytes = $14, input_tokens = $37, output_tokens = $38, cached_input_tokens = $39, "
    "cost_nano_usd = $40, model_turns = $41 "
    "WHERE id = $1 AND (workflow, subject, status, started_at, ended_at, "
    "next_seq, steps, log_bytes, state_bytes, header_bytes, steps_bytes, steps_count, "
    "signals_bytes, signals_count, input_bytes, result_bytes) IS NOT DISTINCT FROM "
    "($22, $23, $24, $25, $26, $15, $27, $16, $28, $29, $30, $31, $32, $33, $34, $35) "
    "AND ($20::bigint IS NULL OR EXISTS (SELECT 1 FROM fence)) RETURNING id), "
    // The append that ends the execution releases its lease in the same commit.
    "rel AS (UPDATE leases SET released = true WHERE $36 AND execution_id = (SELECT id FROM upd) "
    "AND token = $20 AND owner_id = $21 AND NOT released) "
    "INSERT INTO events (execution_id, seq, body, checksum) "
    "SELECT id, $17, $18, $19 FROM upd RETURNING execution_id";

// The appends arrive as one array per column ($1..$41, one element per append), in the order
// appendRow gives them.
constexpr const char* kAppendSql =
    "WITH i AS (SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[], "
    "$6::int8[], $7::int8[], $8::int8[], $9::int8[], $10::int8[], $11::int8[], $12::int8[], "
    "$13::int8[], $14::int8[], $15::int8[], $16::int8[], $17::int8[], $18::bytea[], $19::int8[], "
    "$20::int8[], $21::text[], $22::text[], $23::text[], $24::text[], $25::int8[], $26::int8[], "
    "$27::int8[], $28::int8[], $29::int8[], $30::int8[], $31::int8[], $32::int8[], $33::int8[], "
    "$34::int8[], $35::int8[], $36::bool[], $37::int8[], $38::int8[], $39::int8[], $40::int8[], "
    "$41::int8[]) AS t(id, status, ended_at, next_seq, steps, log_bytes, "
    "state_bytes, header_bytes, steps_bytes, steps_count, signals_bytes, signals_count, "
    "input_bytes, result_bytes, was_next_seq, was_log_bytes, seq, body, checksum, token, "
    "owner_id, was_workflow, was_subject, was_status, was_started_at, was_ended_at, was_steps, "
    "was_state_bytes, was_header_bytes, was_steps_bytes, was_steps_count, was_signals_bytes, "
    "was_signals_count, was_input_bytes, was_result_bytes, release, input_tokens, output_tokens, "
    "cached_input_tokens, cost_nano_usd, model_turns)), "
    // The current leases of the fenced appends, locked against a takeover until the commit.
    "fence AS (SELECT l.execution_id FROM leases l JOIN i ON l.execution_id = i.id "
    "AND l.token = i.token AND l.owner_id = i.owner_id WHERE NOT l.released FOR SHARE OF l), "
    "upd AS (UPDATE executions e SET status = i.status, ended_at = i.ended_at, "
    "next_seq = i.next_seq, steps = i.steps, log_bytes = i.log_bytes, "
    "state_bytes = i.state_bytes, header_bytes = i.header_bytes, steps_bytes = i.steps_bytes, "
    "steps_count = i.steps_count, signals_bytes = i.signals_bytes, "
    "signals_count = i.signals_count, input_bytes = i.input_bytes, "
    "result_bytes = i.result_bytes, input_tokens = i.input_tokens, "
    "output_tokens = i.output_tokens, cached_input_tokens = i.cached_input_tokens, "
    "cost_nano_usd = i.cost_nano_usd, model_turns = i.model_turns "
    "FROM i WHERE e.id = i.id AND (e.workflow, e.subject, "
    "e.status, e.started_at, e.ended_at, e.next_seq, e.steps, e.log_bytes, e.state_bytes, "
    "e.header_bytes, e.steps_bytes, e.steps_count, e.signals_bytes, e.signals_count, "
    "e.input_bytes, e.result_bytes) IS NOT DISTINCT FROM (i.was_workflow, i.was_subject, "
    "i.was_status, i.was_started_at, i.was_ended_at, i.was_next_seq, i.was_steps, "
    "i.was_log_bytes, i.was_state_bytes, i.was_header_bytes, i.was_steps_bytes, "
    "i.was_steps_count, i.was_signals_bytes, i.was_signals_count, i.was_input_bytes, "
    "i.was_result_bytes) AND (i.token IS NULL OR i.id IN (SELECT execution_id FROM fence)) "
    "RETURNING e.id, i.seq, i.body, i.checksum), "
    "rel AS (UPDATE leases l SET released = true FROM upd JOIN i ON i.id = upd.id "
    "WHERE i.release AND l.execution_id = i.id AND l.token = i.token "
    "AND l.owner_id = i.owner_id AND NOT l.released) "
    "INSERT INTO events (execution_id, seq, body, checksum) "
    "SELECT id, seq, body, checksum FROM upd RETURNING execution_id";

constexpr std::size_t kColumns = 41;

// One append's values, in the order of kOneSql's parameters and kAppendSql's columns.
std::vector<Param> appendRow(const OneStatementAppend& r) {
  const ExecutionInfo& known = *r.known;
  const ExecutionInfo& a = r.plan.after;
  const int64_t seq = r.plan.events[0].seq;
  const std::string& text = r.plan.texts[0];
  return {
      Param::text(known.id), Param::text(kernel::statusName(a.status)),
      Param::optionalInt64(a.endedAtMillis), Param::int64(a.nextSeq), Param::int64(a.steps),
      Param::int64(a.logBytes), Param::int64(a.stateBytes), Param::int64(a.sizes.headerBytes),
      Param::int64(a.sizes.stepsBytes), Param::int64(a.sizes.stepsCount),
      Param::int64(a.sizes.signalsBytes), Param::int64(a.sizes.signalsCount),
      Param::int64(a.sizes.inputBytes), Param::int64(a.sizes.resultBytes),
      Param::int64(known.nextSeq), Param::int64(known.logBytes), Param::int64(seq),
      Param::bytes(text), Param::int64(kernel::rowChecksum(known.id, seq, text)),
      Param::optionalInt64(r.fence ? std::optional<int64_t>(r.fence->token) : std::nullopt),
      Param::optionalText(r.fence ? std::optional<std::string>(r.fence->owner.id) : std::nullopt),
      // The whole row as this store last wrote it (next seq and log bytes above).
      Param::text(known.workflow), Param::optionalText(known.subject),
      Param::text(kernel::statusName(known.status)), Param::int64(known.startedAtMillis),
      Param::optionalInt64(known.endedAtMillis), Param::int64(known.steps),
      Param::int64(known.stateBytes), Param::int64(known.sizes.headerBytes),
      Param::int64(known.sizes.stepsBytes), Param::int64(known.sizes.stepsCount),
      Param::int64(known.sizes.signalsBytes), Param::int64(known.sizes.signalsCount),
      Param::int64(known.sizes.inputBytes), Param::int64(known.sizes.resultBytes),
      Param::boolean(r.releaseLease), Param::int64(a.usage.inputTokens),
      Param::int64(a.usage.outputTokens), Param::int64(a.usage.cachedInputTokens),
      Param::int64(a.usage.costNanoUsd), Param::int64(a.usage.modelTurns)};
}

// The appends of `round` (one per execution) as kAppendSql's arrays.
std::vector<Param> columnsOf(const std::vector<OneStatementAppend*>& round) {
  std::vector<std::vector<Param>> columns(kColumns);
  for (auto& column : columns) column.reserve(round.size());
  for (const OneStatementAppend* r : round) {
    std::vector<Param> row = appendRow(*r);
    for (std::size_t c = 0; c < kColumns; ++c) columns[c].push_back(std::move(row[c]));
  }
  std::vector<Param> params;
  params.reserve(kColumns);
  for (const auto& column : columns) params.push_back(Param::array(column.front(), column));
  return params;
}

}  // namespace

Connection& AppendGroups::connection() {
  // One the server closed while it sat here is dropped before anything is sent on it.
  if (held_ && !(*held_)->stillOpen()) held_.reset();
  if (!held_) held_.emplace(pool_.acquire());
  return **held_;
}

// One statement for `round`; sets each append's outcome.
void AppendGroups::runRound(const std::vector<OneStatementAppend*>& round) noexcept {
  std::optional<Result> r;
  try {
    Connection& conn = connection();
    // One append alone takes the plain statement: unnest's arrays cost it about 100 µs more.
    r.emplace(round.size() == 1
                  ? execCommitting(conn, kOneSql, appendRow(*round[0]), "append event")
                  : execCommitting(conn, kAppendSql, columnsOf(round), "append event"));
  } catch (const RetryTransaction&) {
    return;  // a serialization failure or deadlock wrote nothing: the callers' transactions retry
  } catch (const UnavailableError&) {
    // No connection, or it broke on the way (outcome unknown, execCommitting says so): every
    // append of the statement shares that. A refusal the server answered with (a lock or
    // statement timeout, a full disk) may be one row's: below.
    const bool connectionGone = !held_ || (*held_)->broken();
    if (connectionGone) held_.reset();
    if (connectionGone || round.size() == 1) {
      for (OneStatementAppend* a : round) a->error = std::current_exception();
      return;
    }
    for (OneStatementAppend* a : round) runRound({a});
    return;
  } catch (...) {
    // An error of one row (a unique violation, a value the server refuses) fails the whole
    // statement: run each append alone, so the error belongs to the one that caused it.
    if (held_ && (*held_)->broken()) held_.reset();
    if (round.size() == 1) {
      round[0]->error = std::current_exception();
      return;
    }
    for (OneStatementAppend* a : round) runRound({a});
    return;
  }
  // Committed: the rows it returns are the appends that matched.
  std::unordered_set<std::string_view> matched;
  for (int row = 0; row < r->rows(); ++row) matched.insert(r->text(row, 0));
  for (OneStatementAppend* a : round) a->matched = matched.count(a->known->id) > 0;
}

void AppendGroups::run(const std::vector<OneStatementAppend*>& group) noexcept {
  std::vector<OneStatementAppend*> pending = group;
  while (!pending.empty()) {
    std::vector<OneStatementAppend*> round, later;
    std::unordered_set<std::string_view> ids;
    for (OneStatementAppend* a : pending) {
      (ids.insert(a->known->id).second ? round : later).push_back(a);
    }
    runRound(round);
    pending = std::move(later);
  }
}

}  // namespace loom::postgres
