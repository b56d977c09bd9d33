#include "support/home_blobs.h"

#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "content/blob_codec.h"

namespace loom::testing {
namespace {

// Calls `row` for each row of `sql` (one text or blob column) on loom.db opened read-only;
// nothing when the database or its blobs table does not exist.
template <typename Row>
void eachPackedRow(const std::filesystem::path& database, const std::string& sql,
                   const std::string& address, Row row) {
  std::error_code ec;
  if (!std::filesystem::exists(database, ec)) return;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(database.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    throw std::runtime_error("cannot open " + database.string());
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* select = nullptr;
  // No blobs table: nothing was ever packed there.
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &select, nullptr) == SQLITE_OK) {
    if (!address.empty()) {
      sqlite3_bind_text(select, 1, address.data(), static_cast<int>(address.size()),
                        SQLITE_TRANSIENT);
    }
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(select)) == SQLITE_ROW) {
      row(std::string(static_cast<const char*>(sqlite3_column_blob(select, 0)),
                      static_cast<std::size_t>(sqlite3_column_bytes(select, 0))));
    }
    sqlite3_finalize(select);
    if (rc != SQLITE_DONE) {
      std::string why = sqlite3_errmsg(db);
      sqlite3_close(db);
      throw std::runtime_error("reading the blobs of " + database.string() + ": " + why);
    }
  }
  sqlite3_close(db);
}

}  // namespace

std::string homeStoredLog(const std::filesystem::path& home, const std::string& id) {
  std::string log;
  eachPackedRow(home / "loom.db",
                "SELECT body FROM events WHERE execution_id = ?1 ORDER BY seq", id,
                [&](std::string body) { log += body + "\n"; });
  return log;
}

std::vector<std::string> homeBlobAddresses(const std::filesystem::path& home) {
  std::vector<std::string> out;
  eachPackedRow(home / "loom.db", "SELECT address FROM blobs", "",
                [&](std::string address) { out.push_back(std::move(address)); });
  std::error_code ec;
  if (std::filesystem::exists(home / "blobs", ec)) {
    for (const auto& f : std::filesystem::recursive_directory_iterator(home / "blobs")) {
      std::string name = f.path().filename().string();
      if (f.is_regular_file() && name.size() == 64) out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool homeHasBlob(const std::filesystem::path& home, const std::string& address) {
  auto all = homeBlobAddresses(home);
  return std::binary_search(all.begin(), all.end(), address);
}

std::string homeBlobStoredBytes(const std::filesystem::path& home, const std::string& address) {
  std::string bytes;
  eachPackedRow(home / "loom.db", "SELECT bytes FROM blobs WHERE address = ?1", address,
                [&](std::string b) { bytes = std::move(b); });
  if (!bytes.empty()) return bytes;
  std::error_code ec;
  if (!std::filesystem::exists(home / "blobs", ec)) return bytes;
  for (const auto& f : std::filesystem::recursive_directory_iterator(home / "blobs")) {
    if (f.path().filename() != address) continue;
    std::ifstream in(f.path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  return bytes;
}

std::string homeBlobBytes(const std::filesystem::path& home, const std::string& address) {
  std::string encoding;
  std::string size;
  eachPackedRow(home / "loom.db",
                "SELECT CAST(encoding AS TEXT) || ' ' || CAST(size AS TEXT) FROM blobs "
                "WHERE address = ?1",
                address, [&](std::string row) {
                  encoding = row.substr(0, row.find(' '));
                  size = row.substr(row.find(' ') + 1);
                });
  std::string stored = homeBlobStoredBytes(home, address);
  if (encoding.empty()) return stored;  // a file, or no such blob
  return content::detail::decodeBlob(stored, std::stoll(encoding), std::stoll(size),
                                     "blob " + address);
}

}  // namespace loom::testing
