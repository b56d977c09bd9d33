// Where a home's stores live, and the one place that opens them: the embedded home
// (<home>/loom.db, a folder of blobs) or, with storage.url, one PostgreSQL schema shared by
// every machine (docs/spec/postgresql.md). Boot and every `loom` command open their stores
// here, so the two never disagree on where a run's data is.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <string>

#include "loom/app/config.h"
#include "loom/compliance/blob_ledger.h"
#include "loom/compliance/key_store.h"
#include "loom/content/content_store.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/snapshot_store.h"
#include "loom/middleware/kill_switch_store.h"
#include "loom/postgres/postgres_event_store.h"
#include "loom/sweep/archive_store.h"
#include "loom/util/clock.h"

namespace loom::sqlite {
class BorrowedWriter;
}

namespace loom::app {

struct StorageLocation {
  std::filesystem::path home;  // the local folder: loom.db and the archive when embedded
  std::string url;             // empty: the embedded home
  std::string schema = "loom";
  std::string durability = "full";  // storage.eventStore.durability (SQLite)
  // The time of leases, touches and ledger rows on PostgreSQL; null: the server's clock
  // (BootOptions::clockOnPostgres: the simulator's one injected time).
  std::shared_ptr<const Clock> postgresClock;

  bool onPostgres() const { return !url.empty(); }
  std::filesystem::path database() const { return home / "loom.db"; }
  postgres::PostgresOptions postgresOptions() const {
    return {.url = url, .schema = schema, .clock = postgresClock};
  }
  // "the home /x/.loom" or "the postgresql schema 'loom' at postgresql://u:***@h/db".
  std::string describe() const;
};

// The location `config` names (storage.home, storage.url, storage.schema).
StorageLocation storageLocation(const Config& config);

// The stores of a location. On PostgreSQL each connects and checks the schema version
// (FailedPreconditionError: run `loom db migrate`); times are the server's clock.
// `clock`: the time SQLite's leases are granted and expire by (a server's own on PostgreSQL).
std::unique_ptr<kernel::EventStore> openEventStore(
    const StorageLocation& where, std::shared_ptr<const Clock> clock = systemClock());
std::unique_ptr<kernel::SnapshotStore> openSnapshotStore(const StorageLocation& where);
// True when both paths name one location: the same file when both exist (through symlinks
// and bind mounts), else the same path once symlinks of its existing part are resolved.
bool sameFile(const std::filesystem::path& a, const std::filesystem::path& b);

// The default content store `config` wires (storage.contentStore: its C++ instance, the
// schema's with storage.url, or the filesystem, SQLite or memory store at its path, by default
// under storage.home); without the sealing or ledger layers boot adds.
// `postgresClock`: StorageLocation::postgresClock. `logWriter`: the writer the home's SQLite log
// lends (SqliteEventStore::lendWriter), for the blobs packed in its file (ADR 0017).
// Refuses, creating nothing, to open anew a store the home record says the runs stored blobs
// in whose folder or file is gone (requireRecordedContentStore).
std::shared_ptr<content::ContentStore> openContentStore(
    const Config& config, std::shared_ptr<const Clock> clock,
    std::shared_ptr<const Clock> postgresClock = nullptr,
    std::shared_ptr<sqlite::BorrowedWriter> logWriter = nullptr);
// `masterKey` is copied by the store; the caller wipes its own.
std::unique_ptr<compliance::KeyStore> openKeyStore(const StorageLocation& where,
                                                   const std::array<uint8_t, 32>& masterKey,
                                                   std::string masterKeyOrigin,
                                                   std::shared_ptr<const Clock> clock);
std::unique_ptr<compliance::BlobLedger> openBlobLedger(const StorageLocation& where);
// Retention's archive segments: <home>/archive, or the schema's archive tables (staged in
// <home>/archive/.<schema>.staging while they upload).
std::shared_ptr<sweep::ArchiveStore> openArchiveStore(const StorageLocation& where);
std::unique_ptr<middleware::KillSwitchStore> openKillSwitch(const StorageLocation& where,
                                                            std::shared_ptr<const Clock> clock);

}  // namespace loom::app
