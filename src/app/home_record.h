// The home record: what a Loom home remembers of the config its runs were made with, in
// loom.db (table home_record) or, on PostgreSQL, in the schema's meta table
// (docs/spec/home-record.md). Every command that opens the home
// reads it, so a command given no --config still uses the content store the runs offloaded
// to and the keys that seal them, and a command given another store is refused instead of
// sweeping, erasing or exporting the wrong one.
// - contentStore: {"kind", "path", "sealed", "shared"} of the persistent content store
//   (filesystem or SQLite): its path relative to the home when it lies inside it (a copied,
//   restored or moved home then uses its own copy), else absolute. Written by the first boot
//   whose config can offload to it. Read back as an absolute path.
// - keys: security.keys ({"file": path} or {"env": NAME}) and the sealing switches
//   ({"erase", "crypto"}). Written (and kept current) by every boot with security.keys. On
//   PostgreSQL the origin is a row per machine, keys@<host>: a key file's path is local.
// Thread-safety: functions open their own connection; safe from any thread.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "loom/app/config.h"
#include "loom/compliance/master_key.h"
#include "storage_location.h"

namespace loom::app {

struct ContentStoreIdentity {
  std::string kind;  // "filesystem", "sqlite" or "postgresql"
  std::string path;  // absolute, lexically normal; "blobs" (the table) for "postgresql"
  bool sealed = false;
  bool operator==(const ContentStoreIdentity&) const = default;
};

struct HomeRecord {
  std::optional<ContentStoreIdentity> contentStore;
  std::optional<compliance::KeysConfig> keys;
  bool contentStoreShared = false;  // storage.contentStore.shared
  bool erase = false;               // compliance.erase
  bool crypto = false;  // security.crypto
  // Set when the home's runs use keys but this machine has recorded no origin of its own (on
  // PostgreSQL): why, and what to pass. A command then refuses sealed data instead of running
  // without keys.
  std::optional<std::string> keysUnknownHere;
};

// The identity of the content store `config` wires for the home `home`; nullopt for a store
// with no place on disk (memory, or a C++ instance).
std::optional<ContentStoreIdentity> contentStoreIdentity(const Config& config,
                                                         const std::filesystem::path& home);

// `path` absolute and lexically normal, without a trailing '/': how a home's record spells
// the paths of stores and homes.
std::string normalPath(const std::filesystem::path& path);

// "the filesystem content store at /x/blobs (sealed)": how messages name a store.
std::string describe(const ContentStoreIdentity& store);

// The record of the home at `where`; empty when its loom.db or the table does not exist.
// Throws DataLossError naming the row when a row is not what Loom writes, and (PostgreSQL)
// FailedPreconditionError when the schema was never migrated.
HomeRecord readHomeRecord(const StorageLocation& where);

// Records `config` for its home at boot (see above). Throws FailedPreconditionError, writing
// nothing, when the config can offload and wires another content store than the recorded one.
void recordHome(const Config& config);
// Records where `config` reads its master key, and its erase and crypto switches: called only
// once the key store opened with that key, so that a key the home was not created with (another
// home's, on a shared PostgreSQL schema) changes no row.
void recordKeys(const Config& config);

// What requireRecordedContentStore found of the home's recorded store, for
// confirmRecordedContentStore once it is open.
struct RecordedStore {
  ContentStoreIdentity store;
  bool openedRow = false;              // row contentStoreOpened is there
  std::optional<std::string> storeId;  // its storeId: the id the store holds (StoreRecord)
  // The contentStore row to write back: the same store, named relative to the home.
  std::optional<std::string> rewriteRow;
};

// Refuses (FailedPreconditionError) to open `config`'s content store, whichever it is, when the
// home record says the runs stored blobs in a store (row contentStoreOpened) whose own file is
// gone: the LAYOUT of a filesystem store, the database of a SQLite one (an unmounted disk, a
// moved folder). Opening would create a new, empty store, and erasure and export would take
// every blob they cannot see there for absent. Returns the recorded store when `config` wires
// it (the same place however spelled), for confirmRecordedContentStore.
std::optional<RecordedStore> requireRecordedContentStore(const Config& config);

// Once the recorded store is open: the store names itself (StoreRecord: written at its first
// open, recorded in row contentStoreOpened), and another store mounted in its place (another
// home's) is refused (FailedPreconditionError), since the sweep would take all its blobs for
// unneeded. Records the row (and the id) when missing; a store outside the home is claimed by
// it (StoreRecord::claim).
void confirmRecordedContentStore(const Config& config, const RecordedStore& recorded);

// Fills `config` (a default one, for a command given no --config) from `record`: the recorded
// content store, security.keys, compliance.erase and security.crypto.
void applyHomeRecord(const HomeRecord& record, Config& config);

// Why `config`'s content store is not the one the home's runs offloaded to (for the sweep,
// erasure and export, which must act on that store); nullopt when it is, or when the home
// recorded none and `store` (the wired store) holds no blob (nothing was offloaded there).
std::optional<std::string> contentStoreMismatch(const Config& config,
                                                const content::ContentStore& store);

}  // namespace loom::app
