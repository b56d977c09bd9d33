#include "loom/postgres/postgres_event_store.h"

#include <chrono>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "kernel/append_plan.h"
#include "kernel/group_commit.h"
#include "kernel/lease_rules.h"
#include "kernel/log_check.h"
#include "loom/json/json.h"
#include "pg_append_group.h"
#include "pg_control_reads.h"
#include "pg_pool.h"
#include "pg_workers.h"
#include "pg_schema.h"

namespace loom::postgres {
namespace {

using kernel::ControlEvent;
using kernel::Event;
using kernel::ExecutionInfo;
using kernel::Lease;

constexpr const char* kBegin = "BEGIN";
constexpr const char* kBeginSnapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
constexpr int64_t kScanPage = 256;

}  // namespace

struct PostgresEventStore::Impl {
  explicit Impl(PostgresOptions o)
      : options(std::move(o)), pool(options.url, options.schema, options.maxIdleConnections) {
    auto conn = pool.acquire();
    schema::check(*conn);
  }

  // Appends inside the caller's transaction; `fence`, when set, must be the current lease.
  // Returns the metadata after the append.
  ExecutionInfo appendIn(Connection& conn, const std::string& executionId, int64_t expectedNextSeq,
                         std::vector<Event>& events, const Lease* fence) {
    if (fence != nullptr) {
      kernel::requireCurrentLease(schema::readLease(conn, executionId, schema::Lock::kShare),
                                  *fence, "append");
    }
    auto current = schema::readInfo(conn, executionId, /*forUpdate=*/true);
    bool isNew = !current;
    kernel::AppendPlan plan =
        kernel::planAppend(executionId, current, expectedNextSeq, std::move(events));
    for (std::size_t i = 0; i < plan.events.size(); ++i) {
      int64_t seq = plan.events[i].seq;
      conn.exec("INSERT INTO events (execution_id, seq, body, checksum) VALUES ($1, $2, $3, $4)",
                {Param::text(executionId), Param::int64(seq), Param::bytes(plan.texts[i]),
                 Param::int64(kernel::rowChecksum(executionId, seq, plan.texts[i]))},
                "append event");
    }
    schema::writeInfo(conn, plan.after, isNew);
    // A submission: wake the workers (delivered at commit). A run started under its runner's
    // lease runs already; a NOTIFY serializes every committing notifier of the server (async.c
    // holds a database-wide lock from before the commit to after it), so none is sent for it.
    if (isNew && fence == nullptr) notifyWork(conn);
    return std::move(plan.after);
  }

  // The schema's channel of news for workers (awaitWork).
  // At most 63 bytes, PostgreSQL's identifier length (two schemas that share a long prefix
  // share a channel: a worker may wake for nothing, never sleep through news).
  std::string channel() const { return ("loom_" + options.schema).substr(0, 63); }
  void notifyWork(Connection& conn) const {
    conn.exec("SELECT pg_notify($1, '')", {Param::text(channel())}, "notify the workers");
  }

  // One event appended in one statement (committed on its own) with the single-event appends
  // of other executions that queued meanwhile (pg_append_group.h), planned from `known`, the
  // metadata this store last wrote. Returns the metadata after it, or nullopt when it matched
  // nothing (another writer appended, the lease moved): then nothing was written and the
  // caller takes the transactional path, which says why.
  std::optional<ExecutionInfo> appendInOneStatement(const ExecutionInfo& known, Event& event,
                                                    const Lease* fence) {
    std::vector<Event> one;
    one.push_back(event);
    OneStatementAppend request;
    request.known = &known;
    request.plan = kernel::planAppend(known.id, known, known.nextSeq, std::move(one));
    request.fence = fence;
    request.releaseLease = fence != nullptr && !kernel::isEnded(known.status) &&
                           kernel::isEnded(request.plan.after.status);
    appends.submit(request);
    if (request.error) std::rethrow_exception(request.error);
    if (!request.matched) return std::nullopt;
    if (request.releaseLease) rememberReleased(*fence);
    return std::move(request.plan.after);
  }

  // The leases an ending append released (appendInOneStatement): their runner's release that
  // follows needs no statement. Bounded: forgetting one costs a harmless second release.
  static std::string leaseKey(const Lease& lease) {
    return lease.executionId + '\0' + std::to_string(lease.token) + '\0' + lease.owner.id;
  }
  void rememberReleased(const Lease& lease) {
    std::lock_guard lock(releasedMu);
    if (releasedByEnd.size() >= kMaxKnown) releasedByEnd.clear();
    releasedByEnd.insert(leaseKey(lease));
  }
  bool takeReleased(const Lease& lease) {
    std::lock_guard lock(releasedMu);
    return releasedByEnd.erase(leaseKey(lease)) > 0;
  }
  // remove() forgets them with the log: a recreated execution's tokens start again.
  void forgetReleased(const std::string& executionId) {
    std::lock_guard lock(releasedMu);
    std::string prefix = executionId + '\0';
    std::erase_if(releasedByEnd, [&](const std::string& key) { return key.starts_with(prefix); });
  }

  // A shortcut statement that commits on its own, on `conn` from the pool. nullopt when `conn`
  // sat idle in the pool and turns out dropped (a failover left it half-open): the caller
  // takes its transaction, which begins on a fresh connection, reads the rows back and says
  // what holds (so a statement the old server applied before the answer was lost is reported
  // by the rules, never applied twice).
  template <typename Params>
  static std::optional<Result> execFresh(Pool::PoolLease& conn, const char* sql,
                                         const Params& params, std::string_view op) {
    try {
      return execCommitting(*conn, sql, params, op);
    } catch (const RetryTransaction&) {
      throw;
    } catch (const UnavailableError&) {
      if (conn.reused() && conn->broken()) return std::nullopt;
      throw;
    }
  }

  // The first event of an execution its runner holds the lease of (a run started inline), in
  // one statement committed on its own: the executions row is inserted only while the lease
  // is current (read FOR SHARE, as appendIn does) and no row of that id exists, and the event
  // row only when that insert happened. Returns the metadata after it, or nullopt when it
  // inserted nothing (the lease moved, the execution exists): the transaction says why. No
  // NOTIFY: its runner runs it (appendIn).
  std::optional<ExecutionInfo> startInOneStatement(const std::string& executionId, Event& event,
                                                   const Lease& fence) {
    std::vector<Event> one;
    one.push_back(event);
    kernel::AppendPlan plan = kernel::planAppend(executionId, std::nullopt, 1, std::move(one));
    static const char* kSql =
        "WITH fence AS (SELECT 1 FROM leases WHERE execution_id = $1 AND token = $24 "
        "AND owner_id = $25 AND NOT released FOR SHARE), "
        "created AS (INSERT INTO executions (" LOOM_PG_EXECUTION_COLUMNS
        ") SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, "
        "$18, $19, $20, $21, $22, $23 WHERE EXISTS (SELECT 1 FROM fence) "
        "ON CONFLICT (id) DO NOTHING RETURNING id) "
        "INSERT INTO events (execution_id, seq, body, checksum) "
        "SELECT id, 1, $26, $27 FROM created RETURNING execution_id";
    std::vector<Param> params = schema::infoParams(plan.after);  // $1..$23
    params.push_back(Param::int64(fence.token));
    params.push_back(Param::text(fence.owner.id));
    params.push_back(Param::bytes(plan.texts[0]));
    params.push_back(Param::int64(kernel::rowChecksum(executionId, 1, plan.texts[0])));
    auto conn = pool.acquire();
    auto r = execFresh(conn, kSql, params, "start an execution");
    if (!r || r->rows() != 1) return std::nullopt;
    return std::move(plan.after);
  }

  // Two writers creating one execution at once: the second insert is a unique violation,
  // a ConflictError, as a stale expectedNextSeq is. A single event after a known append takes
  // one statement (appendInOneStatement), so does a leased start (startInOneStatement);
  // anything else, or a miss, one transaction.
  int64_t append(const std::string& executionId, int64_t expectedNextSeq, std::vector<Event> events,
                 const Lease* fence) {
    if (events.size() == 1 && expectedNextSeq == 1 && fence != nullptr &&
        events[0].type == kernel::EventType::kExecutionStarted) {
      try {
        if (auto after = startInOneStatement(executionId, events[0], *fence)) {
          remember(*after);
          return after->nextSeq;
        }
      } catch (const RetryTransaction&) {
        // A serialization failure or deadlock wrote nothing: the transaction below retries.
      }
    } else if (events.size() == 1 && events[0].type != kernel::EventType::kCodeUpgraded) {
      // (An upgrade moves code_version, which the one statement leaves as it is.)
      if (auto known = knownInfo(executionId); known && known->nextSeq == expectedNextSeq) {
        if (auto after = appendInOneStatement(*known, events[0], fence)) {
          remember(*after);
          return after->nextSeq;
        }
      }
    }
    try {
      ExecutionInfo after = inTransaction(pool, kBegin, [&](Connection& conn) {
        std::vector<Event> batch = events;  // a retried transaction plans again from a copy
        return appendIn(conn, executionId, expectedNextSeq, batch, fence);
      });
      remember(after);
      return after.nextSeq;
    } catch (...) {
      forget(executionId);
      throw;
    }
  }

  std::optional<ExecutionInfo> knownInfo(const std::string& executionId) const {
    std::lock_guard lock(knownMu);
    auto it = known.find(executionId);
    if (it == known.end()) return std::nullopt;
    return it->second;
  }
  void remember(const ExecutionInfo& info) {
    std::lock_guard lock(knownMu);
    if (known.size() >= kMaxKnown) known.clear();
    known[info.id] = info;
  }
  void forget(const std::string& executionId) {
    std::lock_guard lock(knownMu);
    known.erase(executionId);
  }

  // The first lease of an execution in one statement committed on its own: planned by the
  // shared rule at time 0 (a first lease's times are now, now and now + ttl) and shifted by
  // the clock in the statement, inserted only when the execution has no lease row. nullopt
  // when it has one: the transaction (changeLease) applies the rules to it.
  std::optional<Lease> grantFirstLease(const kernel::LeaseRequest& request) {
    Lease lease = kernel::grantLease(std::nullopt, request, 0);
    static const char* kSql =
        "INSERT INTO leases (execution_id, owner_id, host, pid, boot_id, token, acquired_at, "
        "renewed_at, expires_at, released, pid_namespace, start_ticks) "
        "SELECT $1, $2, $3, $4, $5, $6, $7 + now.ms, $8 + now.ms, $9 + now.ms, $10, $11, $12 "
        "FROM (SELECT COALESCE($13::bigint, "
        "(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS ms) now "
        "ON CONFLICT (execution_id) DO NOTHING RETURNING acquired_at";
    std::optional<int64_t> clockNow;
    if (options.clock) clockNow = options.clock->nowMillis();
    auto conn = pool.acquire();
    auto r = execFresh(
        conn, kSql,
        std::vector<Param>{Param::text(lease.executionId), Param::text(lease.owner.id),
                           Param::text(lease.owner.host), Param::int64(lease.owner.pid),
                           Param::text(lease.owner.bootId), Param::int64(lease.token),
                           Param::int64(lease.acquiredAtMillis),
                           Param::int64(lease.renewedAtMillis), Param::int64(lease.expiresAtMillis),
                           Param::boolean(lease.released), Param::text(lease.owner.pidNamespace),
                           Param::int64(lease.owner.startTicks), Param::optionalInt64(clockNow)},
        "acquire a lease");
    if (!r || r->rows() != 1) return std::nullopt;
    const int64_t now = r->int64(0, 0);
    lease.acquiredAtMillis += now;
    lease.renewedAtMillis += now;
    lease.expiresAtMillis += now;
    return lease;
  }

  template <typename Change>
  Lease changeLease(const std::string& executionId, Change&& change) {
    for (int attempt = 1;; ++attempt) {
      try {
        return inTransaction(pool, kBegin, [&](Connection& conn) {
          auto current = schema::readLease(conn, executionId, schema::Lock::kUpdate);
          Lease next = change(current, postgres::nowMillis(conn, options.clock));
          schema::writeLease(conn, next, !current);
          return next;
        });
      } catch (const ConflictError& e) {
        // Two first acquisitions inserted the row at once: the loser reads the winner's lease.
        if (dynamic_cast<const kernel::LeaseLostError*>(&e) != nullptr || attempt >= 5) throw;
      }
    }
  }

  const PostgresOptions options;
  mutable Pool pool;
  // awaitWork's own connection, LISTENing on channel(); opened on first use.
  mutable std::mutex listenMu;
  mutable std::unique_ptr<Connection> listener;  // GUARDED_BY(listenMu)
  // When the listener last could not connect: it is not tried again for a second.
  mutable std::chrono::steady_clock::time_point listenFailedAt;  // GUARDED_BY(listenMu)
  // The metadata this store last wrote per execution: what a one-statement append plans from.
  static constexpr std::size_t kMaxKnown = 4096;
  mutable std::mutex knownMu;
  std::unordered_map<std::string, ExecutionInfo> known;  // GUARDED_BY(knownMu)
  std::mutex releasedMu;
  std::unordered_set<std::string> releasedByEnd;  // GUARDED_BY(releasedMu)
  // Single-event appends of several executions share a statement and its commit.
  AppendGroups groups{pool};
  kernel::GroupCommitQueue<OneStatementAppend> appends{
      [this](const std::vector<OneStatementAppend*>& group) { groups.run(group); }};
};

PostgresEventStore::PostgresEventStore(PostgresOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

PostgresEventStore::~PostgresEventStore() = default;

int64_t PostgresEventStore::append(const std::string& executionId, int64_t expectedNextSeq,
                                   std::vector<Event> events) {
  return impl_->append(executionId, expectedNextSeq, std::move(events), nullptr);
}

int64_t PostgresEventStore::appendLeased(const Lease& lease, int64_t expectedNextSeq,
                                         std::vector<Event> events) {
  return impl_->append(lease.executionId, expectedNextSeq, std::move(events), &lease);
}

void PostgresEventStore::scan(const std::string& executionId, int64_t fromSeq,
                              const std::function<void(const Event&)>& visit) const {
  // The metadata and the rows from one snapshot, so they can be checked against each other.
  auto conn = impl_->pool.begin(kBeginSnapshot);
  auto info = schema::readInfo(*conn, executionId, false);
  kernel::ScanCheck check(executionId, fromSeq,
                          info ? std::optional<int64_t>(info->nextSeq) : std::nullopt);
  for (int64_t from = std::max<int64_t>(fromSeq, 1);;) {
    Result r = conn->exec(
        "SELECT seq, body, checksum FROM events WHERE execution_id = $1 AND seq >= $2 "
        "ORDER BY seq LIMIT $3",
        {Param::text(executionId), Param::int64(from), Param::int64(kScanPage)}, "scan events");
    for (int row = 0; row < r.rows(); ++row) {
      int64_t seq = r.int64(row, 0);
      kernel::verifyRowChecksum(executionId, seq, r.text(row, 1), r.optionalInt64(row, 2));
      Event event = kernel::eventFromText(executionId, seq, r.text(row, 1));
      check.visit(event);
      visit(event);
      from = seq + 1;
    }
    if (r.rows() < kScanPage) break;
  }
  check.finish();
  conn->run("COMMIT", "end the read transaction");
}

std::optional<ExecutionInfo> PostgresEventStore::info(const std::string& executionId) const {
  return withConnection(
      impl_->pool, [&](Connection& conn) { return schema::readInfo(conn, executionId, false); });
}

std::vector<ExecutionInfo> PostgresEventStore::list(const kernel::ExecutionFilter& filter) const {
  return withConnection(impl_->pool,
                        [&](Connection& conn) { return schema::listInfos(conn, filter); });
}

bool PostgresEventStore::remove(const std::string& executionId) {
  impl_->forget(executionId);
  impl_->forgetReleased(executionId);
  struct ForgetAfter {  // an append of this store that finished meanwhile remembered it again
    Impl& impl;
    const std::string& id;
    ~ForgetAfter() { impl.forget(id); }
  } forgetAfter{*impl_, executionId};
  return inTransaction(impl_->pool, kBegin, [&](Connection& conn) {
    // Locked first, in the order append locks them, so no append is half-way meanwhile (its
    // rows would survive the delete, uncommitted when it ran).
    schema::readLease(conn, executionId, schema::Lock::kUpdate);
    schema::readInfo(conn, executionId, /*forUpdate=*/true);
    Result events = conn.exec("DELETE FROM events WHERE execution_id = $1",
                              {Param::text(executionId)}, "remove events");
    Result meta = conn.exec("DELETE FROM executions WHERE id = $1", {Param::text(executionId)},
                            "remove execution metadata");
    conn.exec("DELETE FROM leases WHERE execution_id = $1", {Param::text(executionId)},
              "remove the lease");
    return events.changed() > 0 || meta.changed() > 0;
  });
}

int64_t PostgresEventStore::appendControl(int64_t expectedNextSeq,
                                          std::vector<ControlEvent> events) {
  return inTransaction(impl_->pool, kBegin, [&](Connection& conn) {
    Result next = conn.exec("SELECT COALESCE(MAX(seq), 0) + 1 FROM control", {},
                            "read the control log's next seq");
    std::vector<ControlEvent> batch = events;
    std::vector<std::string> texts =
        kernel::planControlAppend(next.int64(0, 0), expectedNextSeq, batch);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      // A concurrent appender that took this seq first makes the insert a ConflictError.
      conn.exec("INSERT INTO control (seq, body, checksum) VALUES ($1, $2, $3)",
                {Param::int64(batch[i].seq), Param::bytes(texts[i]),
                 Param::int64(kernel::rowChecksum("", batch[i].seq, texts[i]))},
                "append control event");
    }
    return expectedNextSeq + static_cast<int64_t>(texts.size());
  });
}

int64_t PostgresEventStore::lastControlSeq() const {
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec("SELECT COALESCE(MAX(seq), 0) FROM control", {}, "read the control log's end");
  });
  return r.int64(0, 0);
}

std::vector<ControlEvent> PostgresEventStore::readControlOfTypes(
    const std::vector<std::string>& types, int64_t fromSeq) const {
  return controlEventsOfTypes(impl_->pool, types, fromSeq);
}

std::vector<ControlEvent> PostgresEventStore::readControl(int64_t fromSeq) const {
  return controlEvents(impl_->pool, fromSeq);
}

Lease PostgresEventStore::acquireLease(const kernel::LeaseRequest& request) {
  // An execution this store has not seen (a run starting) most likely has no lease row yet.
  if (!impl_->knownInfo(request.executionId)) {
    try {
      if (auto first = impl_->grantFirstLease(request)) return *first;
    } catch (const RetryTransaction&) {
      // A serialization failure or deadlock wrote nothing: the transaction below runs.
    }
  }
  return impl_->changeLease(request.executionId,
                            [&](const std::optional<Lease>& current, int64_t now) {
                              return kernel::grantLease(current, request, now);
                            });
}

Lease PostgresEventStore::renewLease(const Lease& lease, int64_t ttlMillis) {
  return impl_->changeLease(lease.executionId,
                            [&](const std::optional<Lease>& current, int64_t now) {
                              return kernel::renewedLease(current, lease, ttlMillis, now);
                            });
}

void PostgresEventStore::releaseLease(const Lease& lease) {
  // One statement, committed on its own (running it twice is harmless): the row is released
  // only while it is still `lease` (same token and owner, not released: isCurrentLease).
  // It wakes the workers for a run left to do (parked, handed back); a run this store saw end
  // needs no worker, so no NOTIFY (see appendIn). A lease the run's ending append released
  // in its own statement (appendInOneStatement) needs no statement at all.
  static const char* kRelease =
      "UPDATE leases SET released = true WHERE execution_id = $1 AND token = $2 "
      "AND owner_id = $3 AND NOT released";
  static const char* kReleaseAndNotify =
      "WITH released AS (UPDATE leases SET released = true WHERE execution_id = $1 "
      "AND token = $2 AND owner_id = $3 AND NOT released RETURNING 1) "
      "SELECT pg_notify($4, '') FROM released";
  if (impl_->takeReleased(lease)) return;  // the append that ended the run released it
  auto known = impl_->knownInfo(lease.executionId);
  const bool notify = !known || !kernel::isEnded(known->status);
  withConnection(impl_->pool, [&](Connection& conn) {
    if (notify) {
      execCommitting(conn, kReleaseAndNotify,
                     {Param::text(lease.executionId), Param::int64(lease.token),
                      Param::text(lease.owner.id), Param::text(impl_->channel())},
                     "release a lease");
    } else {
      execCommitting(
          conn, kRelease,
          {Param::text(lease.executionId), Param::int64(lease.token), Param::text(lease.owner.id)},
          "release a lease");
    }
  });
}

std::vector<Lease> PostgresEventStore::claimRunnable(const ClaimRequest& request) {
  if (request.limit == 0) return {};
  if (request.owner.id.empty()) throw InvalidArgumentError("a claim needs an owner id");
  if (request.ttlMillis <= 0) throw InvalidArgumentError("a claim needs a positive ttl");
  json::array skip;
  for (const auto& id : request.skip) skip.emplace_back(id);
  std::string skipJson = json::toText(json::value(std::move(skip)));
  return withConnection(impl_->pool, [&](Connection& conn) { return claimIn(conn, request, skipJson); });
}

// One statement: picks the runnable executions (their rows locked, SKIP LOCKED, so claimers
// split the work) and grants each its lease by acquireLease's rules: a new lease of token 1,
// or the next token where the lease was released or expired. A runner that took a lease since
// the pick makes ON CONFLICT's WHERE false on the lease's newest version: that run is left out.
// A lost answer is only a lost claim: its leases expire in ttlMillis.
std::vector<Lease> PostgresEventStore::claimIn(Connection& conn, const ClaimRequest& request,
                                               const std::string& skipJson) {
  static const char* kClaim =
      "WITH now AS (SELECT COALESCE($1::bigint, "
      "(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS t), "
      "picked AS (SELECT e.id, e.started_at FROM executions e "
      "LEFT JOIN leases l ON l.execution_id = e.id, now "
      "WHERE e.status = 'running' AND (l.execution_id IS NULL OR l.released OR "
      "l.expires_at <= now.t) AND e.id NOT IN (SELECT jsonb_array_elements_text($2::text::jsonb)) "
      "AND ($11::text IS NULL OR e.code_version IS NULL OR e.code_version = $11) "
      "ORDER BY e.started_at, e.id LIMIT $3 FOR UPDATE OF e SKIP LOCKED), "
      "granted AS (INSERT INTO leases AS l (execution_id, owner_id, host, pid, boot_id, token, "
      "acquired_at, renewed_at, expires_at, released, pid_namespace, start_ticks) "
      "SELECT p.id, $4, $5, $6, $7, 1, now.t, now.t, now.t + $8, false, $9, $10 "
      "FROM picked p, now "
      "ON CONFLICT (execution_id) DO UPDATE SET owner_id = excluded.owner_id, "
      "host = excluded.host, pid = excluded.pid, boot_id = excluded.boot_id, "
      "token = l.token + 1, acquired_at = excluded.acquired_at, "
      "renewed_at = excluded.renewed_at, expires_at = excluded.expires_at, released = false, "
      "pid_namespace = excluded.pid_namespace, start_ticks = excluded.start_ticks "
      "WHERE l.released OR l.expires_at <= excluded.acquired_at "
      "RETURNING l.execution_id, l.token, l.acquired_at, l.expires_at) "
      "SELECT g.execution_id, g.token, g.acquired_at, g.expires_at FROM granted g "
      "JOIN picked p ON p.id = g.execution_id ORDER BY p.started_at, p.id";
  const kernel::LeaseOwner& owner = request.owner;
  std::optional<int64_t> clockNow;
  if (impl_->options.clock) clockNow = impl_->options.clock->nowMillis();
  Result rows = execCommitting(
      conn, kClaim,
      {Param::optionalInt64(clockNow), Param::text(skipJson),
       Param::int64(static_cast<int64_t>(request.limit)), Param::text(owner.id),
       Param::text(owner.host), Param::int64(owner.pid), Param::text(owner.bootId),
       Param::int64(request.ttlMillis), Param::text(owner.pidNamespace),
       Param::int64(owner.startTicks), Param::optionalText(request.codeVersion)},
      "claim runnable executions");
  std::vector<Lease> claimed;
  for (int row = 0; row < rows.rows(); ++row) {
    Lease lease;
    lease.executionId = std::string(rows.text(row, 0));
    lease.owner = owner;
    lease.token = rows.int64(row, 1);
    lease.acquiredAtMillis = rows.int64(row, 2);
    lease.renewedAtMillis = lease.acquiredAtMillis;
    lease.expiresAtMillis = rows.int64(row, 3);
    claimed.push_back(std::move(lease));
  }
  return claimed;
}

std::optional<kernel::EventStore::AddressSet> PostgresEventStore::executionsThatMayCite(
    const AddressSet& addresses) const {
  json::array list;
  for (const auto& a : addresses) list.emplace_back(a);
  std::string listJson = json::toText(json::value(std::move(list)));
  // A sealed payload's text cannot be searched: its log is read in the client.
  const std::string sealed = "\"" + std::string(kernel::kSealedKey) + "\":{";
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec(
        "WITH wanted AS (SELECT convert_to(a, 'UTF8') AS bytes "
        "FROM jsonb_array_elements_text($1::text::jsonb) AS a) "
        "SELECT DISTINCT e.execution_id FROM events e WHERE "
        "position(convert_to($2, 'UTF8') IN e.body) > 0 OR "
        "EXISTS (SELECT 1 FROM wanted w WHERE position(w.bytes IN e.body) > 0)",
        {Param::text(listJson), Param::text(sealed)}, "find logs citing addresses");
  });
  AddressSet ids;
  for (int row = 0; row < r.rows(); ++row) ids.emplace(r.text(row, 0));
  return ids;
}

bool PostgresEventStore::awaitWork(int64_t timeoutMillis) const {
  using std::chrono::milliseconds;
  using std::chrono::steady_clock;
  std::lock_guard lock(impl_->listenMu);
  auto& listener = impl_->listener;
  const auto until = steady_clock::now() + milliseconds(timeoutMillis);
  auto left = [&] {
    return std::max<int64_t>(
        0, std::chrono::duration_cast<milliseconds>(until - steady_clock::now()).count());
  };
  if (!listener) {
    // A server that refused a moment ago is not asked again for a second (a worker waits in
    // slices of 20 ms): wait out the rest of that second, or the timeout if it ends first.
    auto retryAt = impl_->listenFailedAt + std::chrono::seconds(1);
    if (steady_clock::now() < retryAt) {
      auto pause = std::min(until, retryAt) - steady_clock::now();
      EventStore::awaitWork(std::chrono::duration_cast<milliseconds>(pause).count());
      if (left() == 0) return false;
    }
    try {
      auto conn = std::make_unique<Connection>(impl_->options.url, impl_->options.schema);
      std::string listen = "LISTEN \"" + impl_->channel() + "\"";
      conn->run(listen.c_str(), "listen for work");
      listener = std::move(conn);
    } catch (const UnavailableError&) {
      impl_->listenFailedAt = steady_clock::now();
      return EventStore::awaitWork(left());  // wait as a poll would
    }
  }
  try {
    return listener->awaitNotification(left());
  } catch (const UnavailableError&) {
    listener.reset();  // lost (a restart): listen again on the next call
    return EventStore::awaitWork(left());
  }
}

void PostgresEventStore::announceWorker(const kernel::WorkerPresence& w, int64_t ttlMillis) {
  writeWorker(impl_->pool, impl_->options.clock, w, ttlMillis);
}

std::vector<kernel::WorkerPresence> PostgresEventStore::liveWorkers() const {
  return readLiveWorkers(impl_->pool, impl_->options.clock);
}

std::optional<Lease> PostgresEventStore::currentLease(const std::string& executionId) const {
  return withConnection(impl_->pool, [&](Connection& conn) {
    return schema::readLease(conn, executionId, schema::Lock::kNone);
  });
}

}  // namespace loom::postgres
