// What a content store records of itself, kept inside the store so that it moves, is copied
// and is restored with it (docs/operations.md, ADR 0022):
// - its id, a random name written at its first open and recorded by the home (row
//   contentStoreOpened): another store mounted or put in its place is refused;
// - the homes that claim it: each home whose store lies outside its own folder names itself
//   there, so that a second home (a copy of the first, or one given the same path) finds the
//   store taken and refuses to delete from it unless the store is declared shared.
// A filesystem store keeps both as files (<folder>/STORE_ID, <folder>/HOMES/<hash>); a SQLite
// store as rows of table loom_store in its own database.
// Thread-safety: each call opens what it reads; safe from any thread and process.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "home_record.h"

namespace loom::app {

class StoreRecord {
 public:
  // `store`: a filesystem or SQLite store (kind "filesystem" or "sqlite"), path absolute.
  explicit StoreRecord(ContentStoreIdentity store);

  // The id the store holds; nullopt when it has none (a store from before ids). Throws
  // DataLossError when what is there is not what Loom writes.
  std::optional<std::string> id() const;
  // Writes a new random id unless the store holds one (another process's, if it won the race);
  // returns the id it holds. Durable before it returns.
  std::string createId() const;
  // Where the id is: "/x/blobs/STORE_ID", "table loom_store of /x/content.db".
  std::string idPlace() const;
  // How an operator writes `id` back (a store restored from before it had one).
  std::string restoreIdAdvice(const std::string& id) const;

  // The homes that claimed the store (absolute paths), in no order.
  std::vector<std::filesystem::path> claims() const;
  // Records that `home` (absolute) uses the store; idempotent.
  void claim(const std::filesystem::path& home) const;
  // Where `home`'s claim is, for the advice to remove a stale one.
  std::string claimPlace(const std::filesystem::path& home) const;
  // Removes `home`'s claim; false when there was none.
  bool release(const std::filesystem::path& home) const;

 private:
  bool isFolder() const { return store_.kind == "filesystem"; }
  ContentStoreIdentity store_;
};

// A home other than this one that uses its content store, and how it was found.
struct OtherHome {
  std::filesystem::path home;
  std::string foundBy;  // "its claim <place>", or "the store lies in its folder"
  // The claim names a folder with no loom.db: a home moved, deleted or on a disk not mounted.
  // What it cites cannot be read, so nothing is deleted until its claim is released.
  bool gone = false;
};

// The homes other than `config`'s whose record names its content store: the homes that claim
// it (StoreRecord) and the home whose folder holds it, each confirmed by its own home record.
// A claim of a home whose record names another store now is stale and left out; one whose
// folder holds no loom.db is listed `gone`. Empty for stores not on disk and on PostgreSQL.
std::vector<OtherHome> otherHomesOfStore(const Config& config);

// Refuses (FailedPreconditionError, starting with `refused`) when another home uses the
// content store and storage.contentStore.shared is not set (two homes deleting from one store
// each delete the blobs only the other cites), or when a home that claimed it is gone. Returns
// the other homes (to spare what they cite) when it is shared.
std::vector<OtherHome> requireStoreOwnedOrShared(const Config& config, std::string_view refused);

}  // namespace loom::app
