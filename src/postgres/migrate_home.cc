#include "migrate_home.h"

#include <sodium.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "loom/json/json.h"
#include "loom/postgres/postgres_admin.h"
#include "loom/postgres/postgres_archive_store.h"
#include "loom/postgres/postgres_content_store.h"
#include "loom/postgres/postgres_snapshot_store.h"
#include "pg_connection.h"
#include "sweep/content_walker.h"
#include "util/sqlite_db.h"

namespace loom::postgres {
namespace {

constexpr int kBusyMillis = 5000;

std::vector<kernel::Event> readLog(const kernel::EventStore& store, const std::string& id) {
  std::vector<kernel::Event> events;
  store.scan(id, 1, [&](const kernel::Event& e) { events.push_back(e); });
  return events;
}

// One digest over the stored text of every event (seq, type, time, data), as Loom renders it.
std::string digestOf(const std::vector<kernel::Event>& events) {
  std::string all;
  for (const auto& e : events) all += kernel::toText(e) + "\n";
  return content::sha256Hex(all);
}

std::string digestOf(const std::vector<kernel::ControlEvent>& events) {
  std::string all;
  for (const auto& e : events) all += kernel::toText(e) + "\n";
  return content::sha256Hex(all);
}

[[noreturn]] void refuse(const std::string& what) {
  throw FailedPreconditionError("loom migrate-home: " + what +
                                "; nothing more was copied. Migrate into an empty schema (`loom "
                                "db migrate --schema NEW`), or drop this one and run again");
}

// The home's execution ids; refuses, before anything is copied, a schema holding another one.
std::vector<std::string> homeExecutions(const HomeSource& from, const PostgresEventStore& to) {
  std::vector<std::string> ids;
  kernel::forEachExecution(from.events, {},
                           [&](const kernel::ExecutionInfo& i) { ids.push_back(i.id); });
  std::set<std::string> mine(ids.begin(), ids.end());
  kernel::forEachExecution(to, {}, [&](const kernel::ExecutionInfo& i) {
    if (!mine.contains(i.id)) {
      refuse("the schema holds execution '" + i.id + "', which the home does not");
    }
  });
  return ids;
}

// Copies each log (one transaction each: whole or not at all); a log an earlier try copied is
// verified, and completed when the home's log has grown since (a run went on meanwhile).
// Returns each execution's next seq as copied.
// Adds to `cited` each address the copied logs cite anywhere (sealed ones are in the ledger).
std::map<std::string, int64_t> copyExecutions(const HomeSource& from,
                                              const std::vector<std::string>& ids,
                                              PostgresEventStore& to, MigrateHomeReport& report,
                                              std::set<std::string>& cited) {
  std::map<std::string, int64_t> copied;
  for (const auto& id : ids) {
    std::vector<kernel::Event> events = readLog(from.events, id);
    for (const auto& e : events) {
      sweep::visitCitedAddresses(e, [&](std::string_view a) { cited.emplace(a); });
    }
    std::vector<kernel::Event> there = to.info(id) ? readLog(to, id) : std::vector<kernel::Event>{};
    if (there.empty()) {
      to.append(id, 1, events);
    } else {
      ++report.alreadyThere;
      std::vector<kernel::Event> prefix(events.begin(),
                                        events.begin() + static_cast<std::ptrdiff_t>(
                                                             std::min(there.size(), events.size())));
      if (there.size() < events.size() && digestOf(prefix) == digestOf(there)) {
        std::vector<kernel::Event> rest(events.begin() + static_cast<std::ptrdiff_t>(there.size()),
                                        events.end());
        to.append(id, static_cast<int64_t>(there.size()) + 1, rest);
      }
    }
    if (digestOf(readLog(to, id)) != digestOf(events)) {
      refuse("execution '" + id + "' in the schema differs from the home's log");
    }
    ++report.executions;
    report.events += static_cast<int64_t>(events.size());
    copied[id] = static_cast<int64_t>(events.size()) + 1;
  }
  return copied;
}

// Refuses when the home changed while it was copied (a run or a signal wrote to it): what was
// written after its log was read is not in the schema. A second try copies the rest.
void requireUnchanged(const HomeSource& from, const std::map<std::string, int64_t>& copied,
                      int64_t controlEvents) {
  std::string changed;
  kernel::forEachExecution(from.events, {}, [&](const kernel::ExecutionInfo& info) {
    auto it = copied.find(info.id);
    if (changed.empty() && (it == copied.end() || it->second != info.nextSeq)) changed = info.id;
  });
  if (changed.empty() &&
      static_cast<int64_t>(from.events.readControl(1).size()) != controlEvents) {
    changed = "(the control log)";
  }
  if (!changed.empty()) {
    throw FailedPreconditionError(
        "loom migrate-home: the home changed while it was copied (execution " + changed +
        " was written to by another loom process); stop every loom process using the home, "
        "then run `loom migrate-home` again: it verifies what is copied and copies the rest");
  }
}

void copyControl(const HomeSource& from, PostgresEventStore& to, MigrateHomeReport& report) {
  std::vector<kernel::ControlEvent> events = from.events.readControl(1);
  std::vector<kernel::ControlEvent> there = to.readControl(1);
  std::vector<kernel::ControlEvent> prefix(
      events.begin(), events.begin() + static_cast<std::ptrdiff_t>(
                                           std::min(there.size(), events.size())));
  if (there.size() < events.size() && digestOf(prefix) == digestOf(there)) {
    // Copied by an earlier try, or never: the home's log has grown since, copy the rest.
    std::vector<kernel::ControlEvent> rest(
        events.begin() + static_cast<std::ptrdiff_t>(there.size()), events.end());
    to.appendControl(static_cast<int64_t>(there.size()) + 1, rest);
  }
  if (digestOf(to.readControl(1)) != digestOf(events)) {
    refuse("the schema's control log differs from the home's");
  }
  report.controlEvents = static_cast<int64_t>(events.size());
}

// Returns the addresses it copied and read back.
std::set<std::string> copyBlobs(const HomeSource& from, const PostgresOptions& to,
                                MigrateHomeReport& report) {
  std::set<std::string> copiedHere;
  if (from.blobs == nullptr) return copiedHere;
  PostgresContentStore blobs(to);
  from.blobs->forEachBlob([&](const content::BlobInfo& info) {
    std::optional<std::string> bytes = from.blobs->get(info.address);
    if (!bytes) {  // the sweep is locked out: listed and gone is data missing, not reclaimed
      refuse("blob " + info.address + " is listed by the home's content store but cannot be read");
    }
    if (blobs.put(*bytes) != info.address) {
      refuse("blob " + info.address + " of the home's content store is not the SHA-256 of its "
             "bytes (a corrupt file: restore it from a backup)");
    }
    std::optional<content::BlobInfo> copied = blobs.stat(info.address);
    if (!copied || copied->size != static_cast<int64_t>(bytes->size())) {
      refuse("blob " + info.address + " did not read back whole from the schema");
    }
    ++report.blobs;
    report.blobBytes += static_cast<int64_t>(bytes->size());
    copiedHere.insert(info.address);
  });
  return copiedHere;
}

// Feeds segment `name` of `store` to `sink` in 1 MiB pieces; returns the SHA-256 (hex) of it.
std::string streamSegment(const sweep::ArchiveStore& store, const std::string& name,
                          const std::function<void(std::string_view)>& sink) {
  auto bytes = store.open(name);
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  for (int64_t at = 0; at < bytes->size(); at += kArchiveChunkBytes) {
    std::string piece = bytes->read(
        at, static_cast<std::size_t>(std::min<int64_t>(kArchiveChunkBytes, bytes->size() - at)),
        "a copy of the segment");
    crypto_hash_sha256_update(&state, reinterpret_cast<const unsigned char*>(piece.data()),
                              piece.size());
    sink(piece);
  }
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state, digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : digest) {
    hex.push_back(kHex[c >> 4]);
    hex.push_back(kHex[c & 15]);
  }
  return hex;
}

// A private temp folder outside the home (which migrate-home never changes), removed on exit.
struct StagingFolder {
  StagingFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "loom-migrate-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw UnavailableError("loom migrate-home: cannot create a temp folder in " +
                             std::filesystem::temp_directory_path().string() +
                             " to stage archive segments (set TMPDIR to a writable folder)");
    }
    path = pattern;
  }
  ~StagingFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path path;
};

// Refuses, before anything is copied, a schema holding a segment the home does not.
void requireNoForeignSegments(const HomeSource& from, const PostgresOptions& to) {
  if (from.archive == nullptr) return;
  std::vector<std::string> home = from.archive->segmentNames();
  PostgresArchiveStore archive(to, {});
  for (const auto& name : archive.segmentNames()) {
    if (!std::binary_search(home.begin(), home.end(), name)) {
      refuse("the schema holds archive segment '" + name + "', which the home does not");
    }
  }
}

// Before the blobs: a sweep on the server pins what the segments cite once the blobs arrive.
// Each segment is streamed (staged in a temp folder, uploaded, read back), never held whole.
void copyArchive(const HomeSource& from, const PostgresOptions& to, MigrateHomeReport& report) {
  if (from.archive == nullptr) return;
  StagingFolder staging;
  PostgresArchiveStore archive(to, staging.path);
  std::vector<std::string> there = archive.segmentNames();
  for (const auto& name : from.archive->segmentNames()) {
    std::filesystem::path staged = staging.path / ("." + name + ".tmp");
    int64_t size = 0;
    std::string digest;
    {
      std::ofstream out(staged, std::ios::binary | std::ios::trunc);
      digest = streamSegment(*from.archive, name, [&](std::string_view piece) {
        out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
        size += static_cast<int64_t>(piece.size());
      });
      if (!out.flush()) {
        throw UnavailableError("loom migrate-home: cannot stage archive segment '" + name +
                               "' in " + staging.path.string() + " (is the disk full?)");
      }
    }
    if (!std::binary_search(there.begin(), there.end(), name)) archive.publish(staged, name);
    std::filesystem::remove(staged);
    if (streamSegment(archive, name, [](std::string_view) {}) != digest) {
      refuse("archive segment '" + name + "' differs in the schema from the home's copy");
    }
    ++report.archiveSegments;
    report.archiveBytes += size;
  }
}

bool hasTable(sqlite::Db& db, const char* table) {
  sqlite::StatementUse s(
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1"));
  s->bind(1, std::string_view(table));
  return s->step("look for a table");
}

// Copies the rows of `select` (a SQLite query of the home) with `insert` ($1..$n, ON CONFLICT
// DO NOTHING), each column a text or an integer as `integerColumns` says; returns the rows.
int64_t copyRows(sqlite::Db& db, Connection& conn, const char* table, const char* select,
                 const std::string& insert, const std::vector<bool>& integerColumns) {
  if (!hasTable(db, table)) return 0;
  sqlite::StatementUse rows(db.prepare(select));
  int64_t n = 0;
  while (rows->step("read the home's " + std::string(table))) {
    std::vector<Param> params;
    for (std::size_t c = 0; c < integerColumns.size(); ++c) {
      int col = static_cast<int>(c);
      params.push_back(integerColumns[c] ? Param::int64(rows->int64(col))
                                         : Param::text(rows->text(col)));
    }
    conn.execDynamic(insert, params, "copy the home's " + std::string(table));
    ++n;
  }
  return n;
}

// The rows of a one-column `select` of the home, empty when `table` is not there.
std::set<std::string> homeRows(sqlite::Db& db, const char* table, const char* select) {
  std::set<std::string> out;
  if (!hasTable(db, table)) return out;
  sqlite::StatementUse rows(db.prepare(select));
  while (rows->step("read the home's " + std::string(table))) out.emplace(rows->text(0));
  return out;
}

// Before anything is written: the schema must hold nothing of the keys and the control log
// that the home does not. An erasure, a sweep or a run on the server after an earlier copy
// writes there; copying the home again would bring back what the server erased (a shredded
// subject's key, readable by the master key, and its blobs).
void requireNotUsedSinceCopied(const HomeSource& from, const PostgresOptions& to,
                               const PostgresEventStore& events) {
  sqlite::Db db(from.database.string(), kBusyMillis);
  Connection conn(to.url, to.schema);
  auto refuseUsed = [](const std::string& what) {
    throw FailedPreconditionError(
        "loom migrate-home: " + what +
        ": the schema was used after an earlier copy (an erasure, a retention run or a run on "
        "the server), and copying the home again would bring back what the server has since "
        "erased; nothing was copied. Keep using the schema: it is the live copy now");
  };
  std::set<std::string> shredded =
      homeRows(db, "subject_key_tombstones", "SELECT subject FROM subject_key_tombstones");
  Result tombstones =
      conn.execDynamic("SELECT subject FROM subject_key_tombstones", {}, "read the schema's keys");
  for (int i = 0; i < tombstones.rows(); ++i) {
    std::string subject(tombstones.text(i, 0));
    if (!shredded.contains(subject)) {
      refuseUsed("subject '" + subject + "' is erased in the schema, not in the home");
    }
  }
  std::set<std::string> keys =
      homeRows(db, "subject_keys", "SELECT subject || char(31) || key_id FROM subject_keys");
  Result there =
      conn.execDynamic("SELECT subject, key_id FROM subject_keys", {}, "read the schema's keys");
  for (int i = 0; i < there.rows(); ++i) {
    std::string subject(there.text(i, 0));
    if (keys.contains(subject + '\x1f' + std::string(there.text(i, 1)))) continue;
    if (shredded.contains(subject)) {  // the home erased the subject after the copy
      refuse("subject '" + subject +
             "' was erased in the home after an earlier copy, and the "
             "schema still holds its key");
    }
    refuseUsed("the schema holds a key of subject '" + subject + "' that the home does not");
  }
  kernel::forEachExecution(events, {}, [&](const kernel::ExecutionInfo& there) {
    std::optional<kernel::ExecutionInfo> here = from.events.info(there.id);
    if (here && there.nextSeq > here->nextSeq) {
      refuseUsed("execution '" + there.id + "' has " + std::to_string(there.nextSeq - 1) +
                 " events in the schema, more than the home's " +
                 std::to_string(here->nextSeq - 1) + " (it went on on the server)");
    }
  });
  std::vector<kernel::ControlEvent> home = from.events.readControl(1);
  std::vector<kernel::ControlEvent> schema = events.readControl(1);
  if (schema.size() > home.size() ||
      digestOf(std::vector<kernel::ControlEvent>(
          home.begin(), home.begin() + static_cast<std::ptrdiff_t>(schema.size()))) !=
          digestOf(schema)) {
    refuseUsed("the schema's control log holds events the home's does not");
  }
}

// The schema's key store must hold this home's check value (one master key for both).
void checkKeyMeta(sqlite::Db& db, Connection& conn) {
  if (!hasTable(db, "key_store_meta")) return;
  sqlite::StatementUse rows(db.prepare("SELECT name, value FROM key_store_meta"));
  while (rows->step("read the home's key store")) {
    Result r = conn.execDynamic("SELECT value FROM key_store_meta WHERE name = $1",
                                {Param::text(rows->text(0))}, "read the schema's key store");
    if (r.rows() != 1 || r.text(0, 0) != rows->text(1)) {
      refuse("the schema's key store was opened with another master key than the home's");
    }
  }
}

void copyKeyRows(const HomeSource& from, const PostgresOptions& to, MigrateHomeReport& report) {
  sqlite::Db db(from.database.string(), kBusyMillis);
  Connection conn(to.url, to.schema);
  copyRows(db, conn, "key_store_meta", "SELECT name, value FROM key_store_meta",
           "INSERT INTO key_store_meta (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING",
           {false, false});
  checkKeyMeta(db, conn);
  report.keys += copyRows(
      db, conn, "subject_keys", "SELECT subject, key_id, nonce, wrapped, created_at FROM subject_keys",
      "INSERT INTO subject_keys (subject, key_id, nonce, wrapped, created_at) "
      "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
      {false, false, false, false, true});
  report.keys += copyRows(
      db, conn, "subject_key_tombstones", "SELECT subject, shredded_at FROM subject_key_tombstones",
      "INSERT INTO subject_key_tombstones (subject, shredded_at) VALUES ($1, $2) "
      "ON CONFLICT DO NOTHING",
      {false, true});
  Result keys = conn.execDynamic(
      "SELECT (SELECT count(*) FROM subject_keys) + (SELECT count(*) FROM subject_key_tombstones)",
      {}, "count the schema's keys");
  if (keys.int64(0, 0) != report.keys) {
    refuse("the schema holds " + std::to_string(keys.int64(0, 0)) + " subject keys and tombstones, "
           "the home " + std::to_string(report.keys));
  }
  report.killSwitch = copyRows(
      db, conn, "kill_switch", "SELECT effect_id, at FROM kill_switch",
      "INSERT INTO kill_switch (effect_id, at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
      {false, true});
  report.ledgerRows = copyRows(
      db, conn, "subject_blobs", "SELECT subject, address, put_at FROM subject_blobs",
      "INSERT INTO subject_blobs (subject, address, put_at) VALUES ($1, $2, $3) "
      "ON CONFLICT DO NOTHING",
      {false, false, true});
}

// Every blob the home holds that its logs cite or its blob ledger lists must be in the schema:
// a listing of the home's content store that came up short (a folder it could not read whole)
// is refused here, never reported as copied. Addresses the home lacks (a look-alike in a tool's
// output, an erased subject's blob) are not the copy's to prove.
void requireCitedBlobsCopied(const HomeSource& from, const PostgresOptions& to,
                             std::set<std::string> cited, const std::set<std::string>& copied) {
  if (from.blobs == nullptr) return;
  sqlite::Db db(from.database.string(), kBusyMillis);
  if (hasTable(db, "subject_blobs")) {
    sqlite::StatementUse rows(db.prepare("SELECT address FROM subject_blobs"));
    while (rows->step("read the home's blob ledger")) cited.emplace(rows->text(0));
  }
  PostgresContentStore blobs(to);
  for (const auto& address : cited) {
    if (copied.contains(address) || !content::isValidAddress(address)) continue;
    if (from.blobs->has(address) && !blobs.has(address)) {
      throw FailedPreconditionError(
          "loom migrate-home: blob " + address +
          " is in the home, cited by its runs or listed "
          "in its blob ledger, but was not copied: the home's content store did not list it "
          "(check the disk under the home and the kernel log), then run `loom migrate-home` "
          "again: it verifies what is copied and copies the rest");
    }
  }
}

// The home record moves too: the keys row as it is; the content store becomes the schema's.
void copyHomeRecord(const HomeSource& from, const PostgresOptions& to) {
  sqlite::Db db(from.database.string(), kBusyMillis);
  if (!hasTable(db, "home_record")) return;
  sqlite::StatementUse rows(db.prepare("SELECT name, value FROM home_record"));
  while (rows->step("read the home record")) {
    std::string name(rows->text(0));
    std::string value(rows->text(1));
    if (name == "contentStoreOpened") continue;  // of the home's own store, not the schema's
    if (name == "contentStore") {
      json::value recorded = json::parse(value, "home_record row contentStore");
      const auto* sealed = recorded.is_object() ? recorded.get_object().if_contains("sealed")
                                                : nullptr;
      value = json::toText(json::object{{"kind", "postgresql"},
                                        {"path", "blobs"},
                                        {"sealed", sealed != nullptr && sealed->is_bool() &&
                                                       sealed->get_bool()}});
    }
    writeHomeRecordRow(to, name, value, false);
    // A row the schema had already (a boot on the server) must say the same as the home's.
    std::optional<std::string> there = readHomeRecordRow(to, name);
    if (!there || json::parse(*there, "the schema's home record") !=
                      json::parse(value, "the home's home record")) {
      refuse("the schema's home record row '" + name + "' (" + there.value_or("none") +
             ") is not the home's (" + value + "): the schema was used with another config");
    }
  }
}

}  // namespace

MigrateHomeReport migrateHome(const HomeSource& from, const PostgresOptions& to,
                              const std::function<void(const std::string&)>& progress) {
  MigrateHomeReport report;
  PostgresEventStore events(to);  // refuses a schema that was never migrated
  std::vector<std::string> ids = homeExecutions(from, events);
  requireNoForeignSegments(from, to);
  requireNotUsedSinceCopied(from, to, events);
  progress("keys, kill switch, blob ledger and home record");
  copyKeyRows(from, to, report);
  copyHomeRecord(from, to);
  progress("archive segments");
  copyArchive(from, to, report);
  progress("blobs");
  std::set<std::string> copiedBlobs = copyBlobs(from, to, report);  // before the logs citing them
  progress("execution logs");
  std::set<std::string> cited;
  std::map<std::string, int64_t> copied = copyExecutions(from, ids, events, report, cited);
  copyControl(from, events, report);
  requireCitedBlobsCopied(from, to, std::move(cited), copiedBlobs);
  progress("snapshots");
  PostgresSnapshotStore snapshots(to);
  from.snapshots.forEach([&](const kernel::Snapshot& s) {
    snapshots.put(s);
    ++report.snapshots;
  });
  requireUnchanged(from, copied, report.controlEvents);
  return report;
}

}  // namespace loom::postgres
