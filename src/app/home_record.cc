#include "home_record.h"

#include <system_error>

#include "util/sqlite_db.h"
#include "loom/util/error.h"

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

json::object rowObject(const std::filesystem::path& database, std::string_view name,
                       const std::string& text) {
  try {
    json::value v = json::parse(text, "home_record row");
    if (v.is_object()) return std::move(v.get_object());
  } catch (const InvalidArgumentError&) {
  }
  throw DataLossError("the home record row '" + std::string(name) + "' in " + database.string() +
                      " is not what Loom writes; restore loom.db from a backup");
}

std::string stringMember(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

bool boolMember(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->get_bool();
}

json::object toJson(const ContentStoreIdentity& s) {
  return json::object{{"kind", s.kind}, {"path", s.path}, {"sealed", s.sealed}};
}

bool canOffload(const Config& config) {
  return config.execution.claimCheck.has_value() || !config.execution.effectMiddleware.empty() ||
         config.compliance.erase || config.security.crypto;
}

std::filesystem::path databaseOf(const std::filesystem::path& home) { return home / "loom.db"; }

struct FirstBlobSeen {};

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

}  // namespace

std::optional<ContentStoreIdentity> contentStoreIdentity(const Config& config,
                                                         const std::filesystem::path& home) {
  const ContentStoreConfig& c = config.storage.contentStore;
  if (c.instance || c.kind == "memory") return std::nullopt;
  std::filesystem::path path = !c.path.empty()
                                   ? std::filesystem::path(c.path)
                                   : home / (c.kind == "sqlite" ? "content.db" : "blobs");
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) absolute = path;
  return ContentStoreIdentity{c.kind, absolute.lexically_normal().string(), c.sealed};
}

std::string describe(const ContentStoreIdentity& s) {
  return "the " + s.kind + " content store at " + s.path + (s.sealed ? " (sealed)" : "");
}

HomeRecord readHomeRecord(const std::filesystem::path& database) {
  HomeRecord record;
  std::error_code ec;
  if (!std::filesystem::exists(database, ec)) return record;
  sqlite::Db db(database.string(), kBusyMillis);
  {
    sqlite::StatementUse exists(db.prepare(kTableExists));
    if (!exists->step("read the home record")) return record;
  }
  if (auto text = readRow(db, "contentStore")) {
    json::object o = rowObject(database, "contentStore", *text);
    record.contentStore = ContentStoreIdentity{stringMember(o, "kind"), stringMember(o, "path"),
                                               boolMember(o, "sealed")};
  }
  if (auto text = readRow(db, "keys")) {
    json::object o = rowObject(database, "keys", *text);
    compliance::KeysConfig keys;
    if (o.contains("file")) keys.file = stringMember(o, "file");
    if (o.contains("env")) keys.env = stringMember(o, "env");
    record.keys = keys;
    record.erase = boolMember(o, "erase");
    record.crypto = boolMember(o, "crypto");
  }
  return record;
}

void recordHome(const Config& config, const std::filesystem::path& home) {
  if (config.storage.eventStore.kind != "sqlite") return;  // nothing outlives the process
  std::optional<ContentStoreIdentity> store = contentStoreIdentity(config, home);
  bool offloads = store && canOffload(config);
  if (!offloads && !config.security.keys) return;
  HomeRecord recorded = readHomeRecord(databaseOf(home));
  if (offloads && recorded.contentStore && !(*recorded.contentStore == *store)) {
    throw FailedPreconditionError(
        "storage.contentStore wires " + describe(*store) + ", but the runs of the home " +
        home.string() + " offload to " + describe(*recorded.contentStore) +
        " (its home record in loom.db); point storage.contentStore at that store, or use "
        "another --home for this config");
  }
  sqlite::Db db(databaseOf(home).string(), kBusyMillis);
  db.exec(kSchema, "create the home record");
  if (offloads && !recorded.contentStore) {
    sqlite::StatementUse insert(db.prepare(kInsert));
    insert->bind(1, std::string_view("contentStore"));
    std::string text = json::toText(toJson(*store));
    insert->bind(2, std::string_view(text));
    insert->step("write the home record");
  }
  if (config.security.keys) {
    json::object keys{{"erase", config.compliance.erase}, {"crypto", config.security.crypto}};
    if (config.security.keys->file) {
      std::error_code ec;
      std::filesystem::path file = std::filesystem::absolute(*config.security.keys->file, ec);
      keys["file"] = (ec ? std::filesystem::path(*config.security.keys->file) : file).string();
    }
    if (config.security.keys->env) keys["env"] = *config.security.keys->env;
    sqlite::StatementUse upsert(db.prepare(kUpsert));
    upsert->bind(1, std::string_view("keys"));
    std::string text = json::toText(json::value(std::move(keys)));
    upsert->bind(2, std::string_view(text));
    upsert->step("write the home record");
  }
}

void applyHomeRecord(const HomeRecord& record, Config& config) {
  if (record.contentStore) {
    config.storage.contentStore.kind = record.contentStore->kind;
    config.storage.contentStore.path = record.contentStore->path;
    config.storage.contentStore.sealed = record.contentStore->sealed;
  }
  if (record.keys) {
    config.security.keys = record.keys;
    config.compliance.erase = record.erase;
    config.security.crypto = record.crypto;
  }
}

std::optional<std::string> contentStoreMismatch(const Config& config,
                                                const std::filesystem::path& home,
                                                const content::ContentStore& wired) {
  HomeRecord recorded = readHomeRecord(databaseOf(home));
  std::optional<ContentStoreIdentity> store = contentStoreIdentity(config, home);
  if (!recorded.contentStore) {
    if (!holdsBlobs(wired)) return std::nullopt;
    return "the home " + home.string() + " has no record of offloading to " +
           (store ? describe(*store) : std::string("the wired content store")) +
           ", which holds blobs: pass --config with the app or loom.toml the runs were made "
           "with (its first boot records the store)";
  }
  if (store && *store == *recorded.contentStore) return std::nullopt;
  return "the wired content store is " +
         (store ? describe(*store) : std::string("not one on disk")) + ", but the runs of " +
         home.string() + " offloaded to " + describe(*recorded.contentStore) +
         "; pass --config with that store (or drop --config to use the recorded one)";
}

}  // namespace loom::app
