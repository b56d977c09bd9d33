// Every EventStore implementation, instantiated over the conformance suite. Adding one is
// one line in the list below.
#include "compliance/sealing_event_store.h"
#include "event_store_conformance.h"
#include "loom/compliance/memory_key_store.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/postgres/postgres_event_store.h"
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
                                           postgres()),
                         factoryName);

}  // namespace
}  // namespace loom::kernel::conformance
