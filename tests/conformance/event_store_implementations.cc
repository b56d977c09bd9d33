// Every EventStore implementation, instantiated over the conformance suite. Adding one is
// one line in the list below.
#include "compliance/sealing_event_store.h"
#include "event_store_conformance.h"
#include "loom/compliance/memory_key_store.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/postgres/postgres_event_store.h"
#include "loom/postgres/postgres_key_store.h"
#include "support/postgres_server.h"

namespace loom::kernel::conformance {
namespace {

// The sealing wrapper over a SQLite store, sealing every execution (sealSubjectless), with the
// stores it wraps owned beside it.
struct SealedParts {
  SealedParts(const std::filesystem::path& dir, std::shared_ptr<const Clock> clock)
      : rows(SqliteEventStoreOptions{(dir / "sealed.db").string(), Durability::kNormal, 5000,
                                     std::move(clock)}) {}
  SqliteEventStore rows;
  compliance::MemoryKeyStore keys;
};
class OwningSealingEventStore : private SealedParts, public compliance::SealingEventStore {
 public:
  OwningSealingEventStore(const std::filesystem::path& dir, std::shared_ptr<const Clock> clock)
      : SealedParts(dir, std::move(clock)),
        compliance::SealingEventStore(rows, keys, compliance::SealingOptions{true}) {}
};

EventStoreFactory sealing() {
  return {"Sealing",
          [](const std::filesystem::path& dir,
             std::shared_ptr<const Clock> clock) -> std::unique_ptr<EventStore> {
            return std::make_unique<OwningSealingEventStore>(dir, std::move(clock));
          },
          /*storesAnotherForm=*/true};
}

// The sealing wrapper over the PostgreSQL stores, as an app on a shared server wires it: the
// events and the subjects' keys in one schema of the test cluster.
struct SealedPostgresParts {
  explicit SealedPostgresParts(postgres::PostgresOptions options)
      : rows((postgres::migrate(options), options)),
        keys(postgres::PostgresKeyStoreOptions{options, std::array<uint8_t, 32>{7, 7, 7}}) {}
  postgres::PostgresEventStore rows;
  postgres::PostgresKeyStore keys;
};
class OwningSealingPostgresStore : private SealedPostgresParts,
                                   public compliance::SealingEventStore {
 public:
  explicit OwningSealingPostgresStore(postgres::PostgresOptions options)
      : SealedPostgresParts(std::move(options)),
        compliance::SealingEventStore(rows, keys, compliance::SealingOptions{true}) {}
};

EventStoreFactory sealingOverPostgres() {
  return {"SealingPostgres",
          [](const std::filesystem::path& dir,
             std::shared_ptr<const Clock> clock) -> std::unique_ptr<EventStore> {
            return std::make_unique<OwningSealingPostgresStore>(postgres::PostgresOptions{
                loom::testing::testPostgresUrl(), loom::testing::testSchemaFor(dir),
                std::move(clock)});
          },
          /*storesAnotherForm=*/true, &loom::testing::postgresUnavailable};
}

EventStoreFactory memory() {
  return {"Memory",
          [](const std::filesystem::path&,
             std::shared_ptr<const Clock> clock) -> std::unique_ptr<EventStore> {
            return std::make_unique<MemoryEventStore>(std::move(clock));
          }};
}

EventStoreFactory sqlite(Durability durability) {
  return {"Sqlite_" + std::string(durabilityName(durability)),
          [durability](const std::filesystem::path& dir,
                       std::shared_ptr<const Clock> clock) -> std::unique_ptr<EventStore> {
            return std::make_unique<SqliteEventStore>(SqliteEventStoreOptions{
                (dir / "events.db").string(), durability, 5000, std::move(clock)});
          }};
}

// A schema of its own per test on the test cluster (support/postgres_server.h).
EventStoreFactory postgres() {
  return {"Postgres",
          [](const std::filesystem::path& dir,
             std::shared_ptr<const Clock> clock) -> std::unique_ptr<EventStore> {
            postgres::PostgresOptions options{loom::testing::testPostgresUrl(),
                                              loom::testing::testSchemaFor(dir), std::move(clock)};
            postgres::migrate(options);
            return std::make_unique<postgres::PostgresEventStore>(options);
          },
          /*storesAnotherForm=*/false, &loom::testing::postgresUnavailable};
}

INSTANTIATE_TEST_SUITE_P(Stores, EventStoreConformance,
                         ::testing::Values(memory(),                     //
                                           sqlite(Durability::kFull),    //
                                           sqlite(Durability::kNormal),  //
                                           sealing(),                    //
                                           postgres(),                   //
                                           sealingOverPostgres()),
                         factoryName);

}  // namespace
}  // namespace loom::kernel::conformance
