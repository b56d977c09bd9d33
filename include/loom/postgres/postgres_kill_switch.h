// The kill switch's rows on PostgreSQL (table kill_switch of the same schema as the
// PostgreSQL EventStore, created by postgres::migrate), so `loom kill` on one machine stops
// effects on every machine: middleware::KillSwitchStore(std::make_unique<
// PostgresKillSwitchRows>(options), ...). Thread-safe.
#pragma once

#include <memory>

#include "loom/middleware/kill_switch_store.h"
#include "loom/postgres/postgres_event_store.h"

namespace loom::postgres {

class PostgresKillSwitchRows : public middleware::KillSwitchRows {
 public:
  // Connects and checks the schema version, as PostgresEventStore does.
  explicit PostgresKillSwitchRows(const PostgresOptions& options);
  ~PostgresKillSwitchRows() override;

  void insert(std::string_view effectId, int64_t atMillis) override;
  int64_t erase(std::optional<std::string_view> effectId) override;
  std::vector<middleware::KillSwitchEntry> list() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::postgres
