// The PostgreSQL SnapshotStore (docs/spec/postgresql.md): snapshots in table `snapshots` of the
// same schema as the PostgreSQL EventStore (created by postgres::migrate). Thread-safe; the
// forEach visitor may call back into the store.
#pragma once

#include <memory>

#include "loom/kernel/snapshot_store.h"
#include "loom/postgres/postgres_event_store.h"

namespace loom::postgres {

class PostgresSnapshotStore : public kernel::SnapshotStore {
 public:
  // Connects and checks the schema version, as PostgresEventStore does.
  explicit PostgresSnapshotStore(const PostgresOptions& options);
  ~PostgresSnapshotStore() override;

  void put(const kernel::Snapshot& snapshot) override;
  std::optional<kernel::Snapshot> latest(const std::string& executionId) const override;
  int64_t remove(const std::string& executionId) override;
  int64_t prune(const std::string& executionId, int64_t keepFromSeq) override;
  void forEach(const std::function<void(const kernel::Snapshot&)>& visit) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::postgres
