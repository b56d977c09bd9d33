// The SQLite KeyStore, the embedded default: the home's loom.db (or a keys.db of its own)
// holds one row per subject, subject_keys(subject, key_id, nonce, wrapped, created_at): the
// subject's random 256-bit data key sealed with XChaCha20-Poly1305 under the master key, with
// the subject and key id as associated data (a row moved to another subject does not open).
// key_store_meta holds the schema version and a check value sealed under the master key, so
// opening with the wrong master key fails at once with a ConfigError, before any key is used.
// The connection runs with PRAGMA secure_delete = ON: a shred overwrites the deleted row on
// its page, then checkpoints the WAL with TRUNCATE so no old frame keeps the wrapped key. A
// checkpoint that fails (an I/O error; busy is left to a later one) fails the shred after its
// delete committed; shredding the subject again checkpoints again.
// subject_key_tombstones remembers shredded subjects (wasShredded), naming no key.
// Thread-safe (one connection under a mutex); several processes may share the file (key
// creation and shred run in BEGIN IMMEDIATE transactions). Keys are not cached: a shred in
// another process is seen by the next call.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "loom/compliance/key_store.h"
#include "loom/util/clock.h"

namespace loom::compliance {

// The key store schema this build writes, and the oldest it reads.
inline constexpr int kSqliteKeyStoreSchema = 1;
inline constexpr int kSqliteKeyStoreSchemaOldestReadable = 1;

struct SqliteKeyStoreOptions {
  std::string path;  // the database file; created with its tables when missing
  // The master key (loadMasterKey). The store keeps its own copy, wiped when it is destroyed;
  // the caller wipes this one.
  std::array<uint8_t, 32> masterKey{};
  // Where the master key came from, for error messages: "the file /etc/loom/master.key",
  // "the environment variable LOOM_MASTER_KEY".
  std::string masterKeyOrigin = "the configured master key (security.keys)";
  int busyTimeoutMillis = 5000;
  std::shared_ptr<const Clock> clock = systemClock();  // created_at and shredded_at
};

class SqliteKeyStore : public KeyStore {
 public:
  // Opens (creating when missing) the store at options.path. Throws ConfigError when the
  // master key does not open the store's check value (the wrong key, naming its origin),
  // FailedPreconditionError when the file was written under a newer key store schema,
  // DataLossError when it is not a readable SQLite database, UnavailableError when another
  // process keeps it locked past the busy timeout, InvalidArgumentError for an empty path.
  explicit SqliteKeyStore(SqliteKeyStoreOptions options);
  // No call may be running. Wipes the store's copy of the master key.
  ~SqliteKeyStore() override;
  SqliteKeyStore(const SqliteKeyStore&) = delete;
  SqliteKeyStore& operator=(const SqliteKeyStore&) = delete;

  // KeyStore; see key_store.h for each contract. Besides, every method may throw
  // UnavailableError (locked past the busy timeout, a full disk, a disk I/O error: retry),
  // InternalError, or DataLossError
  // (a row that does not open under the master key that opened the check value: corrupt),
  // each naming the database path.
  DataKey getOrCreate(const std::string& subject) override;
  std::optional<DataKey> find(const std::string& subject,
                              const std::string& keyId) const override;
  // Durable when it returns. Also tries to checkpoint and truncate the WAL; when other
  // connections keep that from finishing, the frame that held the wrapped key is overwritten
  // by a later checkpoint (the row itself is already gone).
  bool shred(const std::string& subject) override;
  bool wasShredded(const std::string& subject) const override;
  std::vector<std::string> subjects() const override;

  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::compliance
