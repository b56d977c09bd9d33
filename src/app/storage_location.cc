#include "storage_location.h"

#include <sodium.h>

#include "home_record.h"
#include "loom/compliance/sqlite_key_store.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/content/memory_content_store.h"
#include "loom/content/packed_content_store.h"
#include "loom/content/sqlite_content_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/kernel/sqlite_snapshot_store.h"
#include "loom/postgres/postgres_archive_store.h"
#include "loom/postgres/postgres_blob_ledger.h"
#include "loom/postgres/postgres_content_store.h"
#include "loom/postgres/postgres_key_store.h"
#include "loom/postgres/postgres_kill_switch.h"
#include "loom/postgres/postgres_snapshot_store.h"
#include "postgres/pg_connection.h"
#include "util/sqlite_db.h"

namespace loom::app {

bool sameFile(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec) && !ec) return true;
  auto normal = [](const std::filesystem::path& p) {
    std::error_code e;
    std::filesystem::path n = std::filesystem::weakly_canonical(p, e);
    if (e) n = std::filesystem::absolute(p, e).lexically_normal();
    return n.has_filename() ? n : n.parent_path();  // "blobs/" names "blobs"
  };
  return normal(a) == normal(b);
}

std::string StorageLocation::describe() const {
  if (!onPostgres()) return "the home " + home.string();
  return "the postgresql schema '" + schema + "' at " + postgres::redactUrl(url);
}

StorageLocation storageLocation(const Config& config) {
  return {.home = config.storage.home,
          .url = config.storage.url,
          .schema = config.storage.schema,
          .durability = config.storage.eventStore.durability};
}

std::unique_ptr<kernel::EventStore> openEventStore(const StorageLocation& where,
                                                   std::shared_ptr<const Clock> clock) {
  if (where.onPostgres()) {
    return std::make_unique<postgres::PostgresEventStore>(where.postgresOptions());
  }
  kernel::SqliteEventStoreOptions options;
  options.path = where.database().string();
  options.durability = kernel::durabilityFromName(where.durability);
  options.clock = std::move(clock);
  return std::make_unique<kernel::SqliteEventStore>(std::move(options));
}

std::unique_ptr<kernel::SnapshotStore> openSnapshotStore(const StorageLocation& where) {
  if (where.onPostgres()) {
    return std::make_unique<postgres::PostgresSnapshotStore>(where.postgresOptions());
  }
  kernel::SqliteSnapshotStoreOptions options;
  options.path = where.database().string();
  return std::make_unique<kernel::SqliteSnapshotStore>(std::move(options));
}

std::shared_ptr<sweep::ArchiveStore> openArchiveStore(const StorageLocation& where) {
  if (where.onPostgres()) {
    // One staging folder per schema: retention's cleanup of a killed run's temp file runs
    // under the schema's maintenance lock, which covers this folder only.
    return std::make_shared<postgres::PostgresArchiveStore>(
        where.postgresOptions(), where.home / "archive" / ("." + where.schema + ".staging"));
  }
  return sweep::folderArchiveStore(where.home / "archive");
}

namespace {

std::shared_ptr<content::ContentStore> openStore(
    const Config& config, std::shared_ptr<const Clock> clock,
    std::shared_ptr<const Clock> postgresClock, std::shared_ptr<sqlite::BorrowedWriter> logWriter) {
  const ContentStoreConfig& c = config.storage.contentStore;
  if (c.instance) return c.instance;
  if (!config.storage.url.empty()) {
    StorageLocation where = storageLocation(config);
    where.postgresClock = std::move(postgresClock);
    return std::make_shared<postgres::PostgresContentStore>(where.postgresOptions());
  }
  if (c.kind == "memory") return std::make_shared<content::MemoryContentStore>(clock);
  std::filesystem::path home(config.storage.home);
  if (c.kind == "sqlite") {
    return std::make_shared<content::SqliteContentStore>(
        c.path.empty() ? home / "content.db" : std::filesystem::path(c.path), clock);
  }
  std::filesystem::path folder = c.path.empty() ? home / "blobs" : std::filesystem::path(c.path);
  auto files = std::make_shared<content::FilesystemContentStore>(folder, clock);
  if (!sameFile(folder, home / "blobs")) return files;
  // The home's own blobs: small ones packed in loom.db (ADR 0014). Without the home's log in
  // loom.db, no later commit there would flush them, so each put commits durably itself.
  auto commit = config.storage.eventStore.kind == "sqlite"
                    ? content::SqliteContentCommit::kWithDatabase
                    : content::SqliteContentCommit::kDurable;
  std::string database = storageLocation(config).database().string();
  // Put by the log's own writer (ADR 0017) when it writes this file.
  if (commit != content::SqliteContentCommit::kWithDatabase ||
      (logWriter && !sameFile(logWriter->path(), database))) {
    logWriter = nullptr;
  }
  auto pack = std::make_shared<content::SqliteContentStore>(database, clock, 5000, commit,
                                                            std::move(logWriter));
  return std::make_shared<content::PackedContentStore>(std::move(pack), std::move(files),
                                                       c.packBelowBytes);
}

}  // namespace

std::shared_ptr<content::ContentStore> openContentStore(
    const Config& config, std::shared_ptr<const Clock> clock,
    std::shared_ptr<const Clock> postgresClock, std::shared_ptr<sqlite::BorrowedWriter> logWriter) {
  // Never a new, empty store where the runs' blobs were.
  std::optional<RecordedStore> recorded = requireRecordedContentStore(config);
  auto store = openStore(config, std::move(clock), std::move(postgresClock), std::move(logWriter));
  if (recorded) confirmRecordedContentStore(config, *recorded);
  return store;
}

std::unique_ptr<compliance::KeyStore> openKeyStore(const StorageLocation& where,
                                                   const std::array<uint8_t, 32>& masterKey,
                                                   std::string masterKeyOrigin,
                                                   std::shared_ptr<const Clock> clock) {
  if (where.onPostgres()) {
    postgres::PostgresKeyStoreOptions options;
    options.database = where.postgresOptions();
    options.masterKey = masterKey;
    options.masterKeyOrigin = std::move(masterKeyOrigin);
    auto store = std::make_unique<postgres::PostgresKeyStore>(options);
    sodium_memzero(options.masterKey.data(), options.masterKey.size());
    return store;
  }
  compliance::SqliteKeyStoreOptions options;
  options.path = where.database().string();
  options.masterKey = masterKey;
  options.masterKeyOrigin = std::move(masterKeyOrigin);
  if (clock) options.clock = std::move(clock);
  auto store = std::make_unique<compliance::SqliteKeyStore>(options);
  sodium_memzero(options.masterKey.data(), options.masterKey.size());
  return store;
}

std::unique_ptr<compliance::BlobLedger> openBlobLedger(const StorageLocation& where) {
  if (where.onPostgres()) {
    return std::make_unique<compliance::BlobLedger>(
        std::make_unique<postgres::PostgresBlobLedgerRows>(where.postgresOptions()));
  }
  return std::make_unique<compliance::BlobLedger>(where.database().string());
}

std::unique_ptr<middleware::KillSwitchStore> openKillSwitch(const StorageLocation& where,
                                                            std::shared_ptr<const Clock> clock) {
  middleware::KillSwitchOptions options;
  options.path = where.database().string();
  if (clock) options.clock = std::move(clock);
  if (where.onPostgres()) {
    return std::make_unique<middleware::KillSwitchStore>(
        std::make_unique<postgres::PostgresKillSwitchRows>(where.postgresOptions()),
        std::move(options));
  }
  return std::make_unique<middleware::KillSwitchStore>(std::move(options));
}

}  // namespace loom::app
