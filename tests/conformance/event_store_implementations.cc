// Every EventStore implementation, instantiated over the conformance suite. Adding one is
// one line in the list below.
#include "event_store_conformance.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/sqlite_event_store.h"

namespace loom::kernel::conformance {
namespace {

EventStoreFactory memory() {
  return {"Memory", [](const std::filesystem::path&) -> std::unique_ptr<EventStore> {
            return std::make_unique<MemoryEventStore>();
          }};
}

EventStoreFactory sqlite(Durability durability) {
  return {"Sqlite_" + std::string(durabilityName(durability)),
          [durability](const std::filesystem::path& dir) -> std::unique_ptr<EventStore> {
            return std::make_unique<SqliteEventStore>(
                SqliteEventStoreOptions{(dir / "events.db").string(), durability});
          }};
}

INSTANTIATE_TEST_SUITE_P(Stores, EventStoreConformance,
                         ::testing::Values(memory(),                   //
                                           sqlite(Durability::kFull),  //
                                           sqlite(Durability::kNormal)),
                         factoryName);

}  // namespace
}  // namespace loom::kernel::conformance
