#include "store_record.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "loom/util/error.h"
#include "util/posix_file.h"
#include "util/sqlite_db.h"

namespace loom::app {
namespace {

constexpr int kBusyMillis = 5000;
constexpr std::string_view kStoreIdPrefix = "loom content store ";
constexpr std::string_view kClaimPrefix = "loom home ";
constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS loom_store (name TEXT PRIMARY KEY, value TEXT NOT NULL)";
constexpr const char* kTableExists =
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'loom_store'";

std::string randomHex(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  randombytes_buf(raw.data(), raw.size());
  std::string hex(2 * bytes + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), raw.data(), raw.size());
  hex.pop_back();
  return hex;
}

// A claim's file name: a hash of the home's path (a path may hold any byte but '/').
std::string claimName(const std::filesystem::path& home) {
  std::array<unsigned char, 12> digest{};
  const std::string& text = home.native();
  crypto_generichash(digest.data(), digest.size(),
                     reinterpret_cast<const unsigned char*>(text.data()), text.size(), nullptr, 0);
  std::string hex(2 * digest.size() + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), digest.data(), digest.size());
  hex.pop_back();
  return hex;
}

// Reads a small file Loom wrote as "<prefix><value>\n"; nullopt when it does not exist.
std::optional<std::string> readLine(const std::filesystem::path& file, std::string_view prefix) {
  if (!posix::pathExists(file)) return std::nullopt;
  posix::UniqueFd in = posix::openOrThrow(file, O_RDONLY | O_NOFOLLOW, "open");
  std::string text = posix::readAll(in.get(), file);
  if (!text.starts_with(prefix) || !text.ends_with("\n") || text.size() == prefix.size() + 1) {
    throw DataLossError(file.string() + " holds '" + text.substr(0, 80) +
                        "', not what Loom writes; restore that file");
  }
  return text.substr(prefix.size(), text.size() - prefix.size() - 1);
}

// Writes "<prefix><value>\n" into `file` unless it exists (then another process's stands):
// durable, never half-written.
void writeLineOnce(const std::filesystem::path& file, std::string_view prefix,
                   const std::string& value) {
  std::filesystem::path temp = file.string() + "." + randomHex(8) + ".tmp";
  {
    posix::UniqueFd out =
        posix::openOrThrow(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, "create");
    posix::writeAll(out.get(), std::string(prefix) + value + "\n", temp);
    posix::syncFile(out.get(), temp);
  }
  int linked = ::link(temp.c_str(), file.c_str());
  int linkErr = errno;
  ::unlink(temp.c_str());
  if (linked != 0 && linkErr != EEXIST) posix::throwIoError(linkErr, "create", file);
  posix::fsyncDirectory(file.parent_path());
}

// The rows of a SQLite store's table loom_store, read or written on a connection of its own.
class StoreTable {
 public:
  explicit StoreTable(const std::string& path) : db_(path, kBusyMillis) {}
  bool exists() {
    sqlite::StatementUse q(db_.prepare(kTableExists));
    return q->step("read the content store's own record");
  }
  std::optional<std::string> read(std::string_view name) {
    if (!exists()) return std::nullopt;
    sqlite::StatementUse q(db_.prepare("SELECT value FROM loom_store WHERE name = ?1"));
    q->bind(1, name);
    if (!q->step("read the content store's own record")) return std::nullopt;
    return std::string(q->text(0));
  }
  std::vector<std::string> namesFrom(std::string_view prefix) {
    std::vector<std::string> names;
    if (!exists()) return names;
    sqlite::StatementUse q(db_.prepare("SELECT name FROM loom_store ORDER BY name"));
    while (q->step("read the content store's own record")) {
      std::string name(q->text(0));
      if (name.starts_with(prefix)) names.push_back(name.substr(prefix.size()));
    }
    return names;
  }
  void insertUnlessThere(std::string_view name, std::string_view value) {
    db_.exec(kSchema, "create the content store's own record");
    sqlite::StatementUse q(
        db_.prepare("INSERT OR IGNORE INTO loom_store (name, value) VALUES (?1, ?2)"));
    q->bind(1, name);
    q->bind(2, value);
    q->step("write the content store's own record");
  }

 private:
  sqlite::Db db_;
};

constexpr std::string_view kIdRow = "storeId";
constexpr std::string_view kHomeRowPrefix = "home:";

}  // namespace

StoreRecord::StoreRecord(ContentStoreIdentity store) : store_(std::move(store)) {}

std::optional<std::string> StoreRecord::id() const {
  if (isFolder()) return readLine(std::filesystem::path(store_.path) / "STORE_ID", kStoreIdPrefix);
  if (!posix::pathExists(store_.path)) return std::nullopt;
  auto id = StoreTable(store_.path).read(kIdRow);
  if (id && (id->size() != 32 || id->find_first_not_of("0123456789abcdef") != std::string::npos)) {
    throw DataLossError("the row storeId of table loom_store in " + store_.path + " holds '" +
                        id->substr(0, 80) + "', not what Loom writes; restore that file");
  }
  return id;
}

std::string StoreRecord::createId() const {
  std::string fresh = randomHex(16);
  if (isFolder()) {
    writeLineOnce(std::filesystem::path(store_.path) / "STORE_ID", kStoreIdPrefix, fresh);
  } else {
    StoreTable(store_.path).insertUnlessThere(kIdRow, fresh);
  }
  return id().value_or("");
}

std::string StoreRecord::idPlace() const {
  if (isFolder()) return (std::filesystem::path(store_.path) / "STORE_ID").string();
  return "the row storeId of table loom_store in " + store_.path;
}

std::string StoreRecord::restoreIdAdvice(const std::string& id) const {
  if (isFolder()) return "write the line '" + std::string(kStoreIdPrefix) + id + "' into " + idPlace();
  return "run: sqlite3 " + store_.path + " \"" + kSchema +
         "; INSERT INTO loom_store VALUES ('storeId', '" + id + "')\"";
}

std::vector<std::filesystem::path> StoreRecord::claims() const {
  std::vector<std::filesystem::path> homes;
  if (!isFolder()) {
    if (!posix::pathExists(store_.path)) return homes;
    for (std::string& h : StoreTable(store_.path).namesFrom(kHomeRowPrefix)) homes.emplace_back(h);
    return homes;
  }
  std::filesystem::path folder = std::filesystem::path(store_.path) / "HOMES";
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) return homes;
  std::filesystem::directory_iterator entries(folder, ec);
  for (; !ec && entries != std::filesystem::directory_iterator(); entries.increment(ec)) {
    const std::filesystem::path& entry = entries->path();
    if (entry.extension() == ".tmp") continue;  // a claim being written
    if (auto home = readLine(entry, kClaimPrefix)) homes.emplace_back(*home);
  }
  if (ec) {  // a claim that cannot be read is no proof that no home uses the store
    throw UnavailableError("cannot read the claims in " + folder.string() + " (" + ec.message() +
                           "); give this process read access to it");
  }
  return homes;
}

void StoreRecord::claim(const std::filesystem::path& home) const {
  if (!isFolder()) {
    std::string name = std::string(kHomeRowPrefix) + home.string();
    StoreTable(store_.path).insertUnlessThere(name, "");
    return;
  }
  std::filesystem::path folder = std::filesystem::path(store_.path) / "HOMES";
  std::filesystem::path file = folder / claimName(home);
  if (posix::pathExists(file)) return;
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
    posix::throwIoError(errno, "create", folder);
  }
  writeLineOnce(file, kClaimPrefix, home.string());
}

bool StoreRecord::release(const std::filesystem::path& home) const {
  if (!isFolder()) {
    if (!posix::pathExists(store_.path)) return false;
    sqlite::Db db(store_.path, kBusyMillis);
    db.exec(kSchema, "create the content store's own record");
    sqlite::StatementUse q(db.prepare("DELETE FROM loom_store WHERE name = ?1"));
    std::string name = std::string(kHomeRowPrefix) + home.string();
    q->bind(1, std::string_view(name));
    q->step("release a home's claim");
    return db.changes() > 0;
  }
  std::filesystem::path file = std::filesystem::path(store_.path) / "HOMES" / claimName(home);
  if (::unlink(file.c_str()) != 0) {
    if (errno == ENOENT) return false;
    posix::throwIoError(errno, "remove", file);
  }
  posix::fsyncDirectory(file.parent_path());
  return true;
}

std::string StoreRecord::claimPlace(const std::filesystem::path& home) const {
  if (isFolder()) return (std::filesystem::path(store_.path) / "HOMES" / claimName(home)).string();
  return "the row '" + std::string(kHomeRowPrefix) + home.string() + "' of table loom_store in " +
         store_.path;
}

}  // namespace loom::app

namespace loom::app {
namespace {

// Whether the home at `home` records `store` as its content store. A home whose record cannot
// be read is taken to use it (what it cites cannot be known).
bool usesStore(const std::filesystem::path& home, const ContentStoreIdentity& store,
               std::string& note) {
  try {
    HomeRecord record = readHomeRecord(StorageLocation{.home = home});
    return record.contentStore && record.contentStore->kind == store.kind &&
           sameFile(record.contentStore->path, store.path);
  } catch (const Error& e) {
    note = std::string("; its home record cannot be read: ") + e.what();
    return true;
  }
}

// The store the home's runs offload to: the recorded one (a --config given to retention names
// none), else the one `config` wires.
std::optional<ContentStoreIdentity> storeOfRuns(const Config& config) {
  StorageLocation where = storageLocation(config);
  std::optional<ContentStoreIdentity> store = readHomeRecord(where).contentStore;
  return store ? store : contentStoreIdentity(config, where.home);
}

}  // namespace

std::vector<OtherHome> otherHomesOfStore(const Config& config) {
  StorageLocation where = storageLocation(config);
  std::optional<ContentStoreIdentity> store = storeOfRuns(config);
  std::vector<OtherHome> others;
  if (where.onPostgres() || !store || store->kind == "postgresql") return others;
  StoreRecord self(*store);
  std::vector<OtherHome> found;
  for (const auto& home : self.claims()) {
    found.push_back({home, "its claim " + self.claimPlace(home)});
  }
  // The homes whose folder holds the store, however deep and through whatever links: a store
  // inside a home is that home's without a claim.
  std::error_code ec;
  std::filesystem::path real = std::filesystem::weakly_canonical(store->path, ec);
  if (ec) real = std::filesystem::path(store->path);
  for (std::filesystem::path folder = real.parent_path(); !folder.empty();
       folder = folder.parent_path()) {
    if (posix::pathExists(folder / "loom.db")) {
      found.push_back({folder, "the store lies in its folder"});
    }
    if (folder == folder.root_path()) break;
  }
  for (OtherHome& h : found) {
    if (sameFile(h.home, where.home)) continue;
    bool seen = false;
    for (const OtherHome& o : others) seen = seen || sameFile(o.home, h.home);
    if (seen) continue;
    std::string note;
    h.gone = !posix::pathExists(h.home / "loom.db");
    if (!h.gone && !usesStore(h.home, *store, note)) continue;  // it uses another store now
    if (h.gone) note = "; no loom.db there: moved, deleted, or its disk is not mounted";
    h.foundBy += note;
    others.push_back(std::move(h));
  }
  return others;
}

std::vector<OtherHome> requireStoreOwnedOrShared(const Config& config, std::string_view refused) {
  std::vector<OtherHome> others = otherHomesOfStore(config);
  StorageLocation where = storageLocation(config);
  if (others.empty()) return others;
  std::string store = describe(*storeOfRuns(config));
  for (const OtherHome& h : others) {
    if (!h.gone) continue;
    throw FailedPreconditionError(
        std::string(refused) + ": " + store +
        " was claimed by the home " + h.home.string() + " (" + h.foundBy +
        "). What that home cites cannot be read, so its blobs cannot be told from unneeded "
        "ones. If it was moved, run any command that opens its store there (it claims the "
        "store anew); once no home remains at " + h.home.string() +
        ", release its claim: loom doctor --forget-home " + h.home.string());
  }
  if (others.empty() || config.storage.contentStore.shared) return others;
  const OtherHome& first = others.front();
  throw FailedPreconditionError(
      std::string(refused) + ": " + store +
      " is also the content store of the home " + first.home.string() + " (" + first.foundBy +
      ")" + (others.size() > 1 ? " and " + std::to_string(others.size() - 1) + " more" : "") +
      ". Two homes deleting from one store each delete the blobs only the other cites. If " +
      where.describe() +
      " is a copy of that home (cp -a, a backup restored elsewhere), it is safe to read but "
      "must not delete: see 'Copying a home' in docs/operations.md. If both homes share the "
      "store on purpose, set storage.contentStore.shared = true in the config of each and run "
      "once with it (the sweep then spares what any of them cites). `loom doctor` lists the "
      "homes a store serves");
}

}  // namespace loom::app
