// `loom migrate-home`: copies an embedded home (its loom.db and content store) into a
// PostgreSQL schema and verifies the copy, so a user who outgrows one machine keeps their runs
// (docs/operations.md, "Moving an embedded home to PostgreSQL"). What is copied, as Loom wrote
// it (sealed events and blobs stay sealed; nothing is decrypted): every execution's log (one
// transaction per execution), the control log, the latest snapshot of each execution, every
// blob, the key store's rows (check value, wrapped keys, tombstones), the kill switch, the
// blob ledger, the home record and every archive segment (byte for byte, into the archive
// tables). Leases are not: a run nobody runs is orphaned on the server
// and a worker takes it. A second call after a crash goes on where the first stopped: what is
// already there is verified instead of copied, and anything that differs is refused.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "loom/content/content_store.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/snapshot_store.h"
#include "loom/postgres/postgres_event_store.h"
#include "loom/sweep/archive_store.h"

namespace loom::postgres {

struct HomeSource {
  std::filesystem::path database;       // the home's loom.db
  kernel::EventStore& events;           // over it, without a sealing layer
  kernel::SnapshotStore& snapshots;     // over it, without a sealing layer
  content::ContentStore* blobs;         // the recorded content store, raw; nullptr: none
  const sweep::ArchiveStore* archive;   // <home>/archive; nullptr: none
};

struct MigrateHomeReport {
  int64_t executions = 0;  // copied or found equal
  int64_t events = 0;
  int64_t controlEvents = 0;
  int64_t snapshots = 0;
  int64_t blobs = 0;
  int64_t blobBytes = 0;
  int64_t keys = 0;        // subject keys and tombstones
  int64_t killSwitch = 0;
  int64_t ledgerRows = 0;
  int64_t archiveSegments = 0;  // copied or found equal
  int64_t archiveBytes = 0;
  int64_t alreadyThere = 0;  // executions a previous call had copied (verified)
};

// Copies `from` into the schema `to` (migrated: `loom db migrate`) and verifies every
// execution's events, the control log, every blob and every archive segment (a SHA-256 of its
// bytes) by reading them back, and that every blob the home holds which its logs cite or its
// blob ledger lists is in the schema (a listing of the home's store that came up short is
// refused, not reported as copied). Throws
// FailedPreconditionError, copying nothing more, when the schema holds something the home does
// not (another deployment's runs, another master key's check value) or a copy differs.
// `progress` gets one line per phase.
MigrateHomeReport migrateHome(const HomeSource& from, const PostgresOptions& to,
                              const std::function<void(const std::string&)>& progress);

}  // namespace loom::postgres
