// Every ContentStore implementation, instantiated over the conformance suite. Adding one is
// one line in the list below.
#include "compliance/encrypting_content_store.h"
#include "content_store_conformance.h"
#include "loom/compliance/sqlite_key_store.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/content/memory_content_store.h"
#include "loom/content/packed_content_store.h"
#include "loom/content/sqlite_content_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/postgres/postgres_content_store.h"
#include "support/postgres_server.h"

namespace loom::content::conformance {
namespace {

template <typename Store>
ContentStoreFactory factory(std::string name, bool persistent, std::string file = {}) {
  return {std::move(name),
          [file](const std::filesystem::path& dir,
                 std::shared_ptr<const Clock> clock) -> std::unique_ptr<ContentStore> {
            if constexpr (std::is_same_v<Store, MemoryContentStore>) {
              return std::make_unique<Store>(std::move(clock));
            } else {
              return std::make_unique<Store>((dir / file).string(), std::move(clock));
            }
          },
          persistent};
}

// EncryptingContentStore (ADR 0143) over the filesystem store, its keys in a SQLite key store
// beside it (both persistent, so the reopening test applies). Owns what it wraps.
class OwningEncryptingStore : public compliance::EncryptingContentStore {
 public:
  struct Parts {
    compliance::SqliteKeyStore keys;
    FilesystemContentStore inner;
  };
  explicit OwningEncryptingStore(std::unique_ptr<Parts> parts)
      : EncryptingContentStore(parts->inner, parts->keys), parts_(std::move(parts)) {}

 private:
  std::unique_ptr<Parts> parts_;  // destroyed before the base, whose destructor uses neither
};

ContentStoreFactory encrypting() {
  return {"Encrypting",
          [](const std::filesystem::path& dir,
             std::shared_ptr<const Clock> clock) -> std::unique_ptr<ContentStore> {
            std::array<uint8_t, 32> master{};
            master.fill(7);
            std::unique_ptr<OwningEncryptingStore::Parts> parts(new OwningEncryptingStore::Parts{
                compliance::SqliteKeyStore({(dir / "keys.db").string(), master, "test key"}),
                FilesystemContentStore(dir / "content", std::move(clock))});
            return std::make_unique<OwningEncryptingStore>(std::move(parts));
          },
          true};
}

// The home's default (ADR 0014): small blobs packed in a database file, larger ones files. The
// limit of 64 bytes puts the suite's small blobs in the pack and its larger ones in files.
ContentStoreFactory packed() {
  return {"Packed",
          [](const std::filesystem::path& dir,
             std::shared_ptr<const Clock> clock) -> std::unique_ptr<ContentStore> {
            return std::make_unique<PackedContentStore>(
                std::make_shared<SqliteContentStore>((dir / "loom.db").string(), clock, 5000,
                                                     SqliteContentCommit::kWithDatabase),
                std::make_shared<FilesystemContentStore>(dir / "blobs", clock), 64);
          },
          true};
}

// The home as boot opens it (ADR 0017): the pack's puts run on the writer its log lends. Owns
// the log; destroyed first (members go before the base), it closes its writer and the pack's
// last calls use the pack's own.
class PackedBesideItsLog : public PackedContentStore {
 public:
  PackedBesideItsLog(std::unique_ptr<kernel::SqliteEventStore> log,
                     std::shared_ptr<SqliteContentStore> pack,
                     std::shared_ptr<FilesystemContentStore> files)
      : PackedContentStore(std::move(pack), std::move(files), 64), log_(std::move(log)) {}

 private:
  std::unique_ptr<kernel::SqliteEventStore> log_;
};

ContentStoreFactory packedBesideItsLog() {
  return {"PackedBesideItsLog",
          [](const std::filesystem::path& dir,
             std::shared_ptr<const Clock> clock) -> std::unique_ptr<ContentStore> {
            std::string database = (dir / "loom.db").string();
            auto log = std::make_unique<kernel::SqliteEventStore>(
                kernel::SqliteEventStoreOptions{database});
            auto pack = std::make_shared<SqliteContentStore>(
                database, clock, 5000, SqliteContentCommit::kWithDatabase, log->lendWriter());
            return std::make_unique<PackedBesideItsLog>(
                std::move(log), std::move(pack),
                std::make_shared<FilesystemContentStore>(dir / "blobs", clock));
          },
          true};
}

// A schema of its own per test on the test cluster (support/postgres_server.h); reopening the
// same folder reopens the same schema.
ContentStoreFactory postgresStore() {
  return {"Postgres",
          [](const std::filesystem::path& dir,
             std::shared_ptr<const Clock> clock) -> std::unique_ptr<ContentStore> {
            postgres::PostgresOptions options{loom::testing::testPostgresUrl(),
                                              loom::testing::testSchemaFor(dir), std::move(clock)};
            postgres::migrate(options);
            return std::make_unique<postgres::PostgresContentStore>(options);
          },
          true, &loom::testing::postgresUnavailable};
}

INSTANTIATE_TEST_SUITE_P(
    Stores, ContentStoreConformance,
    ::testing::Values(factory<MemoryContentStore>("Memory", false),
                      factory<FilesystemContentStore>("Filesystem", true, "content"),
                      factory<SqliteContentStore>("Sqlite", true, "content.db"), packed(),
                      packedBesideItsLog(), encrypting(), postgresStore()),
    factoryName);

}  // namespace
}  // namespace loom::content::conformance
