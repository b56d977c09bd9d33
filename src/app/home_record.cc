#include "home_record.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <system_error>

#include "loom/content/filesystem_content_store.h"
#include "loom/postgres/postgres_admin.h"
#include "loom/util/error.h"
#include "store_record.h"
#include "util/host.h"
#include "util/posix_file.h"
#include "util/sqlite_db.h"

namespace loom::app {
namespace {

constexpr int kBusyMillis = 5000;
constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS home_record (name TEXT PRIMARY KEY, value TEXT NOT NULL)";
constexpr const char* kSelect = "SELECT value FROM home_record WHERE name = ?1";
constexpr const char* kTableExists =
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'home_record'";
constexpr const char* kInsert = "INSERT OR IGNORE INTO home_record (name, value) VALUES (?1, ?2)";
constexpr const char* kUpsert =
    "INSERT INTO home_record (name, value) VALUES (?1, ?2) "
    "ON CONFLICT (name) DO UPDATE SET value = excluded.value";

std::optional<std::string> readRow(sqlite::Db& db, std::string_view name) {
  sqlite::StatementUse select(db.prepare(kSelect));
  select->bind(1, name);
  if (!select->step("read the home record")) return std::nullopt;
  return std::string(select->text(0));
}

// The rows of the home record at `where`, read once: name -> value.
class RecordRows {
 public:
  explicit RecordRows(const StorageLocation& where) : where_(where) {
    if (where.onPostgres()) return;
    if (!posix::pathExists(where.database())) return;
    db_.emplace(where.database().string(), kBusyMillis);
    bool hasTable = false;
    {
      sqlite::StatementUse exists(db_->prepare(kTableExists));
      hasTable = exists->step("read the home record");
    }
    if (!hasTable) db_.reset();
  }
  std::optional<std::string> read(std::string_view name) {
    if (where_.onPostgres()) return postgres::readHomeRecordRow(where_.postgresOptions(), name);
    if (!db_) return std::nullopt;
    return readRow(*db_, name);
  }
  // True when the home's log holds an execution or a control event (embedded homes only).
  bool holdsRuns() {
    if (!db_) return false;
    struct Table {
      const char* name;
      const char* anyRow;
    };
    for (const Table& t : {Table{"executions", "SELECT 1 FROM executions LIMIT 1"},
                           Table{"control", "SELECT 1 FROM control LIMIT 1"}}) {
      sqlite::StatementUse exists(
          db_->prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1"));
      exists->bind(1, std::string_view(t.name));
      if (!exists->step("read the home's tables")) continue;
      sqlite::StatementUse any(db_->prepare(t.anyRow));
      if (any->step("look for runs in the home")) return true;
    }
    return false;
  }

 private:
  const StorageLocation& where_;
  std::optional<sqlite::Db> db_;
};

// Writes row `name`: with `replace` over what is there, without only when there is none.
void writeRow(const StorageLocation& where, std::string_view name, const std::string& value,
              bool replace) {
  if (where.onPostgres()) {
    postgres::writeHomeRecordRow(where.postgresOptions(), name, value, replace);
    return;
  }
  sqlite::Db db(where.database().string(), kBusyMillis);
  db.exec(kSchema, "create the home record");
  sqlite::StatementUse write(db.prepare(replace ? kUpsert : kInsert));
  write->bind(1, name);
  write->bind(2, std::string_view(value));
  write->step("write the home record");
}

json::object rowObject(const StorageLocation& where, std::string_view name,
                       const std::string& text) {
  try {
    json::value v = json::parse(text, "home_record row");
    if (v.is_object()) return std::move(v.get_object());
  } catch (const InvalidArgumentError&) {
  }
  throw DataLossError("the home record row '" + std::string(name) + "' of " + where.describe() +
                      " is not what Loom writes; restore " +
                      (where.onPostgres() ? std::string("the schema") : where.database().string()) +
                      " from a backup");
}

std::string stringMember(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

bool boolMember(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->get_bool();
}

// One store: the same kind and sealing, at the same place however its path is spelled (a home
// reached through a link).
bool sameStore(const ContentStoreIdentity& a, const ContentStoreIdentity& b) {
  return a.kind == b.kind && a.sealed == b.sealed && (a.path == b.path || sameFile(a.path, b.path));
}

json::object toJson(const ContentStoreIdentity& s) {
  return json::object{{"kind", s.kind}, {"path", s.path}, {"sealed", s.sealed}};
}

bool canOffload(const Config& config) {
  return config.execution.claimCheck.has_value() || !config.execution.effectMiddleware.empty() ||
         config.compliance.erase || config.security.crypto;
}

struct FirstBlobSeen {};

// The row that holds this machine's key origin on PostgreSQL.
std::string machineKeysRow() { return "keys@" + hostName(); }

// True when the store holds any blob (a store that cannot enumerate is taken to hold some).
bool holdsBlobs(const content::ContentStore& store) {
  if (!store.capabilities().enumerate) return true;
  try {
    store.forEachBlob([](const content::BlobInfo&) { throw FirstBlobSeen{}; });
  } catch (const FirstBlobSeen&) {
    return true;  // stopped at the first blob on purpose
  }
  return false;
}

// `path` relative to the home's folder when it lies inside it (through links too); nullopt
// when it lies elsewhere.
std::optional<std::string> insideHome(const std::string& path, const std::filesystem::path& home) {
  std::error_code ec;
  std::filesystem::path folder = std::filesystem::weakly_canonical(home, ec);
  if (ec) return std::nullopt;
  std::filesystem::path target = std::filesystem::weakly_canonical(path, ec);
  if (ec) return std::nullopt;
  std::filesystem::path relative = target.lexically_relative(folder);
  if (relative.empty() || relative == "." || *relative.begin() == "..") return std::nullopt;
  return relative.string();
}

constexpr std::string_view kOpenedRow = "contentStoreOpened";

// A row from before stores inside the home were recorded relative to it names the store by
// its absolute path: in a copied, restored or moved home, the original's. When the home holds
// a store of the same name with the id the home recorded, and the recorded one lay in another
// home's folder (or that folder is gone), that store is this home's own copy of it.
std::optional<std::string> copiedHomesOwnStore(const StorageLocation& where, RecordRows& rows,
                                               const std::string& kind,
                                               const std::filesystem::path& recorded) {
  std::filesystem::path original = recorded.parent_path();
  if (!recorded.has_filename() || insideHome(recorded, where.home) ||
      sameFile(original, where.home)) {
    return std::nullopt;
  }
  if (posix::pathExists(original) && !posix::pathExists(original / "loom.db")) {
    return std::nullopt;  // a store outside any home: not a copy's
  }
  std::filesystem::path own = where.home / recorded.filename();
  auto opened = rows.read(kOpenedRow);
  if (!opened || !posix::pathExists(own)) return std::nullopt;
  json::object row = rowObject(where, kOpenedRow, *opened);
  std::string id = stringMember(row, "storeId");
  try {
    if (id.empty() || StoreRecord({kind, normalPath(own), false}).id() != id) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;  // not a store Loom wrote: the recorded one stands, and is checked
  }
  return normalPath(own);
}

// The recorded store's path as this home reads it: relative to the home's folder, or (a row
// from before that) absolute unless it names the original of a copied home's own store.
std::string resolvedStorePath(const StorageLocation& where, RecordRows& rows,
                              const json::object& row) {
  std::string kind = stringMember(row, "kind");
  std::filesystem::path path(stringMember(row, "path"));
  if (kind == "postgresql") return path.string();
  if (path.is_relative()) return normalPath(where.home / path);
  return copiedHomesOwnStore(where, rows, kind, path).value_or(path.string());
}

// The contentStore row for `store`: its path relative to the home when it lies inside it.
json::object storeRow(const ContentStoreIdentity& store, const std::filesystem::path& home,
                      bool shared) {
  json::object row = toJson(store);
  if (store.kind != "postgresql") {
    if (auto relative = insideHome(store.path, home)) row["path"] = *relative;
  }
  if (shared) row["shared"] = true;
  return row;
}

}  // namespace

std::string normalPath(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) absolute = path;
  std::string text = absolute.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();  // "blobs/" is "blobs"
  return text;
}

std::optional<ContentStoreIdentity> contentStoreIdentity(const Config& config,
                                                         const std::filesystem::path& home) {
  const ContentStoreConfig& c = config.storage.contentStore;
  if (c.instance || c.kind == "memory") return std::nullopt;
  if (!config.storage.url.empty()) return ContentStoreIdentity{"postgresql", "blobs", c.sealed};
  std::filesystem::path path = !c.path.empty()
                                   ? std::filesystem::path(c.path)
                                   : home / (c.kind == "sqlite" ? "content.db" : "blobs");
  return ContentStoreIdentity{c.kind, normalPath(path), c.sealed};
}

std::string describe(const ContentStoreIdentity& s) {
  if (s.kind == "postgresql") {
    return std::string("the postgresql content store (table blobs)") +
           (s.sealed ? " (sealed)" : "");
  }
  return "the " + s.kind + " content store at " + s.path + (s.sealed ? " (sealed)" : "");
}

HomeRecord readHomeRecord(const StorageLocation& where) {
  HomeRecord record;
  RecordRows rows(where);
  if (auto text = rows.read("contentStore")) {
    json::object o = rowObject(where, "contentStore", *text);
    record.contentStore = ContentStoreIdentity{
        stringMember(o, "kind"), resolvedStorePath(where, rows, o), boolMember(o, "sealed")};
    record.contentStoreShared = boolMember(o, "shared");
  }
  if (auto text = rows.read("keys")) {
    json::object o = rowObject(where, "keys", *text);
    record.erase = boolMember(o, "erase");
    record.crypto = boolMember(o, "crypto");
    // On PostgreSQL the key's origin is this machine's row (a file path is local); a row from
    // before per-machine rows kept it in the shared one.
    std::string local = machineKeysRow();
    if (where.onPostgres()) {
      if (auto mine = rows.read(local)) o = rowObject(where, local, *mine);
    }
    compliance::KeysConfig keys;
    if (o.contains("file")) keys.file = stringMember(o, "file");
    if (o.contains("env")) keys.env = stringMember(o, "env");
    if (keys.file || keys.env) {
      record.keys = keys;
    } else {
      record.keysUnknownHere =
          "the runs of " + where.describe() + " use the master key (security.keys), but this " +
          "machine ('" + hostName() + "') has not recorded where it reads it: pass --config " +
          "with the app or loom.toml that has [security.keys] (its boot records the origin for "
          "this machine)";
    }
  }
  return record;
}

namespace {

// The environment variable the shared keys row names, if any.
std::optional<std::string> sharedKeysEnv(const StorageLocation& where) {
  RecordRows rows(where);
  auto text = rows.read("keys");
  if (!text) return std::nullopt;
  json::object o = rowObject(where, "keys", *text);
  if (!o.contains("env")) return std::nullopt;
  return stringMember(o, "env");
}

}  // namespace

void recordHome(const Config& config) {
  if (config.storage.eventStore.kind != "sqlite") return;  // nothing outlives the process
  StorageLocation where = storageLocation(config);
  std::optional<ContentStoreIdentity> store = contentStoreIdentity(config, where.home);
  bool offloads = store && canOffload(config);
  if (!offloads) return;
  HomeRecord recorded = readHomeRecord(where);
  if (offloads && !recorded.contentStore) {
    // Only when there is none: another process booting the new home at once with another store
    // may have written its own first, which then stands (read back below).
    // "v": 2 marks a row whose store is recorded as opened by its own row (contentStoreOpened)
    // once it exists; older rows have none (requireRecordedContentStore).
    json::object row = storeRow(*store, where.home, config.storage.contentStore.shared);
    if (!where.onPostgres()) row["v"] = 2;  // the schema's store never vanishes from under it
    writeRow(where, "contentStore", json::toText(json::value(std::move(row))), false);
    recorded = readHomeRecord(where);
  }
  if (offloads && recorded.contentStore && !sameStore(*recorded.contentStore, *store)) {
    throw FailedPreconditionError(
        "storage.contentStore wires " + describe(*store) + ", but the runs of " + where.describe() +
        " offload to " + describe(*recorded.contentStore) +
        " (its home record); point storage.contentStore at that store, or use another " +
        (where.onPostgres() ? "storage.schema" : "--home") + " for this config");
  }
  if (offloads && recorded.contentStoreShared != config.storage.contentStore.shared) {
    // Declared shared (or no longer) by this config: the row says so for commands without one.
    // Only that member changes (a row from before "v" keeps its meaning).
    RecordRows rows(where);
    json::object row = rowObject(where, "contentStore", rows.read("contentStore").value_or("{}"));
    if (config.storage.contentStore.shared) {
      row["shared"] = true;
    } else {
      row.erase("shared");
    }
    writeRow(where, "contentStore", json::toText(json::value(std::move(row))), true);
  }
}

void recordKeys(const Config& config) {
  if (config.storage.eventStore.kind != "sqlite" || !config.security.keys) return;
  StorageLocation where = storageLocation(config);
  {
    json::object switches{{"erase", config.compliance.erase}, {"crypto", config.security.crypto}};
    json::object origin;
    if (config.security.keys->file) {
      std::error_code ec;
      std::filesystem::path file = std::filesystem::absolute(*config.security.keys->file, ec);
      origin["file"] = (ec ? std::filesystem::path(*config.security.keys->file) : file).string();
    }
    if (config.security.keys->env) origin["env"] = *config.security.keys->env;
    if (where.onPostgres()) {
      // Every machine shares the schema but has its own key file: one origin row per machine.
      // An environment variable's name is no machine's own: it stays in the shared row too, for
      // machines with no row yet (the last one any machine recorded).
      std::optional<std::string> env = config.security.keys->env;
      if (!env) env = sharedKeysEnv(where);
      if (env) switches["env"] = *env;
      writeRow(where, machineKeysRow(), json::toText(json::value(std::move(origin))), true);
    } else {
      for (auto& [name, value] : origin) switches[name] = value;
    }
    writeRow(where, "keys", json::toText(json::value(std::move(switches))), true);
  }
}

namespace {

// What exists once a store was created: a folder's LAYOUT file, a SQLite store's database.
std::filesystem::path storeMarker(const ContentStoreIdentity& store) {
  std::filesystem::path path(store.path);
  return store.kind == "sqlite" ? path : path / "LAYOUT";
}

// How to start an empty store in the recorded one's place, with the id the home recorded.
std::string recreateAdvice(const ContentStoreIdentity& store,
                           const std::optional<std::string>& storeId) {
  std::string id = storeId ? "; then " + StoreRecord(store).restoreIdAdvice(*storeId) : "";
  if (store.kind == "sqlite") {
    return storeId ? StoreRecord(store).restoreIdAdvice(*storeId)
                   : "create an empty file there (touch " + store.path + ")";
  }
  return "write the line 'loom filesystem content store, layout " +
         std::to_string(content::kFilesystemLayoutVersion) + "' into " +
         storeMarker(store).string() + id;
}

}  // namespace

std::optional<RecordedStore> requireRecordedContentStore(const Config& config) {
  if (config.storage.eventStore.kind != "sqlite" || !config.storage.url.empty()) return {};
  StorageLocation where = storageLocation(config);
  std::optional<ContentStoreIdentity> wired = contentStoreIdentity(config, where.home);
  if (!wired) return {};
  RecordRows rows(where);  // one read of loom.db for every row
  auto recordedText = rows.read("contentStore");
  if (!recordedText) return {};
  json::object o = rowObject(where, "contentStore", *recordedText);
  ContentStoreIdentity store{stringMember(o, "kind"), resolvedStorePath(where, rows, o), false};
  if (store.kind == "postgresql") return {};
  // A row naming a store inside the home by its absolute path (from before relative paths, or
  // a copied home's own store): rewritten relative once the store is confirmed.
  std::optional<std::string> rewrite;
  if (std::filesystem::path(stringMember(o, "path")).is_absolute() &&
      insideHome(store.path, where.home)) {
    json::object fixed = o;
    fixed["path"] = *insideHome(store.path, where.home);
    rewrite = json::toText(json::value(std::move(fixed)));
  }
  // The same place however it is spelled (a home reached through a link, a trailing slash).
  // Another store is recordHome's and contentStoreMismatch's to refuse, but the recorded one
  // is checked all the same: a path to it that does not resolve (a link to an unmounted disk)
  // looks like another store and would start an empty one there.
  bool same = store.kind == wired->kind && sameFile(store.path, wired->path);
  auto row = rows.read(kOpenedRow);
  bool opened = false;
  std::optional<std::string> storeId;
  if (row) {
    json::object r = rowObject(where, kOpenedRow, *row);  // not Loom's: DataLoss
    opened = true;  // whatever it names: the check is never turned off by it
    if (r.contains("storeId")) storeId = stringMember(r, "storeId");
  } else if (!o.contains("v")) {
    // A record from before the row: the boot that records the store creates it, before any
    // run, so a home with runs (or control events) had its store. (A home that offloads only
    // since this build has a row with "v", and no contentStoreOpened until its store exists.)
    opened = rows.holdsRuns();
  }
  std::filesystem::path marker = storeMarker(store);
  if (!opened || posix::pathExists(marker)) {
    if (!same) return std::nullopt;
    return RecordedStore{store, row.has_value(), storeId, std::move(rewrite)};
  }
  throw FailedPreconditionError(
      "the runs of " + where.describe() + " stored blobs in " + describe(store) +
      " (its home record), but " + marker.string() +
      " does not exist: is its disk mounted, or was it moved? Mount or restore it and run "
      "again. Loom does not start a new, empty store there: erasure and export would take the "
      "blobs they cannot see for gone. If they are lost for good, start an empty store on "
      "purpose: " +
      recreateAdvice(store, storeId));
}

void confirmRecordedContentStore(const Config& config, const RecordedStore& recorded) {
  const ContentStoreIdentity& store = recorded.store;
  StorageLocation where = storageLocation(config);
  StoreRecord self(store);
  std::optional<std::string> id = self.id();
  if (recorded.storeId && id != recorded.storeId) {
    throw FailedPreconditionError(
        describe(store) + " is not the store the runs of " + where.describe() +
        " stored blobs in: " + self.idPlace() + " " +
        (id ? "names store " + *id : std::string("is missing")) + ", the home recorded " +
        *recorded.storeId +
        ". Is another disk (another home's store) mounted there? Mount the right one and run "
        "again; the sweep would take every blob of another store for unneeded. If it is this "
        "home's store (restored from a backup made before it had an id), " +
        self.restoreIdAdvice(*recorded.storeId));
  }
  if (recorded.rewriteRow) writeRow(where, "contentStore", *recorded.rewriteRow, true);
  // A store outside the home names the homes that use it (otherHomesOfStore).
  if (!insideHome(store.path, where.home)) self.claim(normalPath(where.home));
  if (recorded.storeId) return;
  json::object row{{"kind", store.kind}, {"path", store.path}};
  if (auto relative = insideHome(store.path, where.home)) row["path"] = *relative;
  row["storeId"] = id ? *id : self.createId();  // a store from before ids: adopted
  writeRow(where, kOpenedRow, json::toText(json::value(std::move(row))), true);
}

void applyHomeRecord(const HomeRecord& record, Config& config) {
  if (record.contentStore) {
    // PostgreSQL's content store is the one storage.url implies: only `sealed` is recorded.
    if (record.contentStore->kind != "postgresql") {
      config.storage.contentStore.kind = record.contentStore->kind;
      config.storage.contentStore.path = record.contentStore->path;
    }
    config.storage.contentStore.sealed = record.contentStore->sealed;
    config.storage.contentStore.shared = record.contentStoreShared;
  }
  if (record.keys) {
    config.security.keys = record.keys;
    config.compliance.erase = record.erase;
    config.security.crypto = record.crypto;
  }
}

std::optional<std::string> contentStoreMismatch(const Config& config,
                                                const content::ContentStore& wired) {
  StorageLocation where = storageLocation(config);
  HomeRecord recorded = readHomeRecord(where);
  std::optional<ContentStoreIdentity> store = contentStoreIdentity(config, where.home);
  if (!recorded.contentStore) {
    if (!holdsBlobs(wired)) return std::nullopt;
    return where.describe() + " has no record of offloading to " +
           (store ? describe(*store) : std::string("the wired content store")) +
           ", which holds blobs: pass --config with the app or loom.toml the runs were made "
           "with (its first boot records the store)";
  }
  if (store && sameStore(*store, *recorded.contentStore)) return std::nullopt;
  return "the wired content store is " +
         (store ? describe(*store) : std::string("not one on disk")) + ", but the runs of " +
         where.describe() + " offloaded to " + describe(*recorded.contentStore) +
         "; pass --config with that store (or drop --config to use the recorded one)";
}

}  // namespace loom::app
