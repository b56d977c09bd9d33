// `loom db migrate`: creates or upgrades Loom's tables in a PostgreSQL schema
// (docs/spec/postgresql.md), so the stores on that server can open it. The url comes from
// --url or LOOM_DATABASE_URL; its password is never printed. `loom migrate-home --to URL`
// copies an embedded home into such a schema (postgres/migrate_home.h).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>

#include "app/home_record.h"
#include "command.h"
#include "home_lock.h"
#include "loom/kernel/lease.h"
#include "loom/kernel/version.h"
#include "loom/postgres/postgres_event_store.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/archive_store.h"
#include "loom/sweep/retention.h"
#include "postgres/migrate_home.h"
#include "postgres/pg_connection.h"
#include "util/posix_file.h"

namespace loom::cli {
namespace {

// The schema a command acts on: its --schema, else LOOM_DATABASE_SCHEMA, else "loom".
std::string schemaFor(HomeSession& session, const std::string& given) {
  if (!given.empty()) return given;
  if (!session.options().databaseSchema.empty()) return session.options().databaseSchema;
  return "loom";
}

}  // namespace

Action setupDb(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string action;
    std::string url;
    std::string schema;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("ACTION", args->action, "migrate")
      ->required()
      ->check(CLI::IsMember({"migrate"}));
  command
      .add_option("--url", args->url,
                  "The PostgreSQL server: a libpq URL or connection string "
                  "(default: LOOM_DATABASE_URL)")
      ->type_name("URL");
  command
      .add_option("--schema", args->schema,
                  "The PostgreSQL schema that holds Loom's tables (default: "
                  "LOOM_DATABASE_SCHEMA, else loom)")
      ->type_name("NAME");
  command.add_flag("--json", args->json,
                   "Print one JSON object {\"url\", \"schema\", \"schemaVersion\", "
                   "\"eventSchema\"} (the url with its password as ***)");
  command.footer(
      "`loom db migrate` creates Loom's tables in the schema (creating the schema too), or\n"
      "upgrades older ones, under an advisory lock so workers starting at once migrate once.\n"
      "It never downgrades: a schema of a newer Loom is refused. Run it before the first worker\n"
      "and after every upgrade of Loom; stores refuse a schema they do not know.");
  return [&session, args] {
    std::string url = args->url.empty() ? session.options().databaseUrl : args->url;
    args->schema = schemaFor(session, args->schema);
    if (url.empty()) {
      throw UsageError(
          "`loom db migrate` needs the server: pass --url postgresql://... or set "
          "LOOM_DATABASE_URL");
    }
    postgres::migrate({url, args->schema});
    std::string shown = postgres::redactUrl(url);
    if (args->json) {
      session.out() << json::toText(
                           json::object{{"url", shown},
                                        {"schema", args->schema},
                                        {"schemaVersion", postgres::kPostgresSchemaVersion},
                                        {"eventSchema", EVENT_SCHEMA}})
                    << "\n";
    } else {
      session.out() << "migrated schema '" << args->schema << "' at " << shown << " to version "
                    << postgres::kPostgresSchemaVersion << " (EVENT_SCHEMA " << EVENT_SCHEMA
                    << ")\n";
    }
    return kExitOk;
  };
}

namespace {

// The embedded home at --home, whatever LOOM_DATABASE_URL says: the copy's source.
app::StorageLocation embeddedHome(HomeSession& session) {
  app::StorageLocation where;
  where.home = session.location().home;
  if (!posix::pathExists(where.database())) {
    throw NotFoundError("no Loom home at '" + where.home.string() +
                        "' (it holds no loom.db); pass --home DIR with the home to copy");
  }
  return where;
}

// The content store the home's runs offloaded to (its home record), raw; null when none.
std::shared_ptr<content::ContentStore> recordedBlobs(const app::StorageLocation& home) {
  app::Config config;
  config.storage.home = home.home.string();
  app::HomeRecord record = app::readHomeRecord(home);
  if (!record.contentStore) {
    if (!posix::pathExists(home.home / "blobs")) return nullptr;
  }
  app::applyHomeRecord(record, config);
  return app::openContentStore(config, systemClock());
}

// Refuses while a process runs one of the home's executions: its next steps would be
// written to the home after the copy.
void requireNothingRunning(const kernel::EventStore& events) {
  int64_t now = systemClock()->nowMillis();
  kernel::ExecutionFilter running;
  running.status = kernel::ExecutionStatus::kRunning;
  kernel::forEachExecution(events, running, [&](const kernel::ExecutionInfo& info) {
    auto lease = events.currentLease(info.id);
    if (lease && !kernel::isOrphaned(lease, now)) {
      throw FailedPreconditionError(
          "execution '" + info.id + "' is running (" + kernel::describeHolder(*lease, now) +
          "); stop the workers and runs of this home, then run `loom migrate-home` again");
    }
  });
}

std::string reportText(const postgres::MigrateHomeReport& r) {
  return std::to_string(r.executions) + " executions (" + std::to_string(r.events) + " events; " +
         std::to_string(r.alreadyThere) + " copied by an earlier try), " +
         std::to_string(r.controlEvents) + " control events, " + std::to_string(r.snapshots) +
         " snapshots, " + std::to_string(r.blobs) + " blobs (" + std::to_string(r.blobBytes) +
         " bytes), " + std::to_string(r.keys) + " subject keys and tombstones, " +
         std::to_string(r.killSwitch) + " kill switch stops, " + std::to_string(r.ledgerRows) +
         " blob ledger rows, " + std::to_string(r.archiveSegments) + " archive segments (" +
         std::to_string(r.archiveBytes) + " bytes)";
}

}  // namespace

Action setupMigrateHome(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string to;
    std::string schema;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("--to", args->to, "The PostgreSQL server: a libpq URL or connection string")
      ->required()
      ->type_name("URL");
  command
      .add_option("--schema", args->schema,
                  "The schema to copy into, created with `loom db migrate` (default: "
                  "LOOM_DATABASE_SCHEMA, else loom)")
      ->type_name("NAME");
  command.add_flag("--json", args->json, "Print the counts as one JSON object");
  command.footer(
      "Copies the home at --home (loom.db and its content store) into the schema as Loom wrote\n"
      "it: sealed events and blobs stay sealed. Every execution is copied in one transaction\n"
      "and read back (event counts and a SHA-256 of each log), then the control log, every blob\n"
      "(its address is its SHA-256), the key store's rows, the kill switch, the blob ledger, the\n"
      "home record, the snapshots and the archive segments (a SHA-256 of each, read back).\n"
      "Refused while a run of the home is running. Run it again after a failure: what is there\n"
      "is verified, the rest copied. The home is not changed: keep it as a backup. Then point\n"
      "every command at the server (LOOM_DATABASE_URL).");
  return [&session, args] {
    std::string schema = schemaFor(session, args->schema);
    app::StorageLocation home = embeddedHome(session);
    HomeLock maintenance(home, "migrate-home");
    std::unique_ptr<kernel::EventStore> events = app::openEventStore(home);
    requireNothingRunning(*events);
    std::unique_ptr<kernel::SnapshotStore> snapshots = app::openSnapshotStore(home);
    std::shared_ptr<content::ContentStore> blobs = recordedBlobs(home);
    postgres::PostgresOptions to{.url = args->to, .schema = schema};
    std::shared_ptr<sweep::ArchiveStore> archive = app::openArchiveStore(home);
    // A segment retention journaled but the archive lacks (a disk not mounted) would be left
    // out of the copy, and its runs with it.
    sweep::requireJournaledSegments(*events, sweep::Archive(archive));
    auto report = postgres::migrateHome(
        {home.database(), *events, *snapshots, blobs.get(), archive.get()}, to,
        [](const std::string& phase) {
          std::cerr << "loom migrate-home: copying and checking " << phase << "\n";
        });
    std::string shown = postgres::redactUrl(args->to);
    if (args->json) {
      session.out() << json::toText(json::object{{"home", home.home.string()},
                                                 {"url", shown},
                                                 {"schema", schema},
                                                 {"executions", report.executions},
                                                 {"events", report.events},
                                                 {"alreadyThere", report.alreadyThere},
                                                 {"controlEvents", report.controlEvents},
                                                 {"snapshots", report.snapshots},
                                                 {"blobs", report.blobs},
                                                 {"blobBytes", report.blobBytes},
                                                 {"keys", report.keys},
                                                 {"killSwitch", report.killSwitch},
                                                 {"ledgerRows", report.ledgerRows},
                                                 {"archiveSegments", report.archiveSegments},
                                                 {"archiveBytes", report.archiveBytes}})
                    << "\n";
      return kExitOk;
    }
    session.out() << "copied and verified " << home.home.string() << " into schema '" << schema
                  << "' at " << shown << ": " << reportText(report) << "\n"
                  << "next: export LOOM_DATABASE_URL=<the url> LOOM_DATABASE_SCHEMA=" << schema
                  << "; the home is unchanged (keep it as a backup until the runs there are "
                     "checked)\n";
    return kExitOk;
  };
}

}  // namespace loom::cli
