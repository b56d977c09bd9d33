// The PostgreSQL EventStore (docs/spec/postgresql.md): every execution's events, their
// metadata, the control log and the leases in tables of one schema on a shared server, for
// workers on many machines. Each append is one transaction that locks the execution's
// metadata row (and, fenced, its lease row), so conflicts and fencing hold across every
// process and machine; metadata is updated in the same transaction as the events. Lease times
// are the server's clock unless PostgresOptions::clock is set (tests). Connection loss is an
// UnavailableError (retryable) and loses nothing committed. Thread-safe; a scan visitor may
// call back into the store.
#pragma once

#include <memory>
#include <string>

#include "loom/kernel/event_store.h"
#include "loom/util/clock.h"

namespace loom::postgres {

class Connection;

struct PostgresOptions {
  // A libpq connection string or URL ("postgresql://user:password@host:5432/db"). Its
  // password never appears in an error or a log line.
  std::string url;
  // The PostgreSQL schema holding Loom's tables: lower-case letters, digits and _.
  std::string schema = "loom";
  // Lease times; nullptr (the default): the server's clock, shared by every machine.
  std::shared_ptr<const Clock> clock;
  // Idle connections the process keeps (its stores share them): as many as statements ran at
  // once, up to this; a process running one run at a time keeps one or two.
  std::size_t maxIdleConnections = 64;
};

// The layout version of Loom's tables in a schema (meta 'schema_version').
// 3: the archive tables; 4: executions.code_version; 5: workers (their presence); 6: the
// executions' usage columns (tokens, cost).
inline constexpr int kPostgresSchemaVersion = 6;

// Creates Loom's tables in options.schema (creating the schema too), or upgrades older ones to
// kPostgresSchemaVersion (`loom db migrate`). Idempotent; concurrent calls are serialized by
// an advisory lock. Throws FailedPreconditionError for a schema written by a newer Loom.
void migrate(const PostgresOptions& options);

class PostgresEventStore : public kernel::EventStore {
 public:
  // Connects and checks the schema version: FailedPreconditionError when the tables are
  // missing or older (run `loom db migrate`) or newer than this build knows.
  explicit PostgresEventStore(PostgresOptions options);
  ~PostgresEventStore() override;

  int64_t append(const std::string& executionId, int64_t expectedNextSeq,
                 std::vector<kernel::Event> events) override;
  void scan(const std::string& executionId, int64_t fromSeq,
            const std::function<void(const kernel::Event&)>& visit) const override;
  std::optional<kernel::ExecutionInfo> info(const std::string& executionId) const override;
  std::vector<kernel::ExecutionInfo> list(const kernel::ExecutionFilter& filter) const override;
  bool remove(const std::string& executionId) override;
  int64_t appendControl(int64_t expectedNextSeq, std::vector<kernel::ControlEvent> events) override;
  std::vector<kernel::ControlEvent> readControl(int64_t fromSeq = 1) const override;
  int64_t lastControlSeq() const override;
  // Through the index control_by_type (`loom db migrate` adds it to a schema an earlier build
  // made): the cost grows with the rows returned, not with the log.
  std::vector<kernel::ControlEvent> readControlOfTypes(const std::vector<std::string>& types,
                                                       int64_t fromSeq = 1) const override;
  kernel::Lease acquireLease(const kernel::LeaseRequest& request) override;
  kernel::Lease renewLease(const kernel::Lease& lease, int64_t ttlMillis) override;
  void releaseLease(const kernel::Lease& lease) override;
  std::optional<kernel::Lease> currentLease(const std::string& executionId) const override;
  void announceWorker(const kernel::WorkerPresence& presence, int64_t ttlMillis) override;
  std::vector<kernel::WorkerPresence> liveWorkers() const override;
  int64_t appendLeased(const kernel::Lease& lease, int64_t expectedNextSeq,
                       std::vector<kernel::Event> events) override;
  // One transaction: the runnable executions' rows locked FOR UPDATE SKIP LOCKED (expiry by
  // the server's clock), their leases granted by the shared rules.
  std::vector<kernel::Lease> claimRunnable(const ClaimRequest& request) override;
  // LISTEN on a connection of this store's own to the schema's channel ("loom_<schema>"),
  // which every store's transaction that starts an execution or releases a lease NOTIFYs. A
  // lost listener is opened again on the next call (work announced meanwhile is found by the
  // caller's next claim).
  bool awaitWork(int64_t timeoutMillis) const override;
  // One scan of the events table in the server: the ids of logs whose stored text holds an
  // address, or a sealed payload.
  std::optional<AddressSet> executionsThatMayCite(const AddressSet& addresses) const override;

 private:
  std::vector<kernel::Lease> claimIn(postgres::Connection& conn, const ClaimRequest& request,
                                     const std::string& skipJson);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::postgres
