// The PostgreSQL KeyStore (docs/spec/postgresql.md): each subject's data key wrapped under the
// master key (the same rows and check value as the SQLite store: src/compliance/key_wrapping.h)
// in tables subject_keys, subject_key_tombstones and key_store_meta of the same schema as the
// PostgreSQL EventStore (created by postgres::migrate). Opening with another master key than
// the schema was first used with is a ConfigError naming its origin. A shred deletes the row
// and vacuums the table; PostgreSQL does not overwrite deleted rows in place, so old bytes of
// the wrapped key may remain in free space, the WAL and backups until they are overwritten: a
// shred is final against anyone who does not also hold the master key (ADR 0010). Thread-safe;
// several processes and machines may share the schema.
#pragma once

#include <array>
#include <memory>

#include "loom/compliance/key_store.h"
#include "loom/postgres/postgres_event_store.h"

namespace loom::postgres {

struct PostgresKeyStoreOptions {
  PostgresOptions database;
  // The master key (loadMasterKey). The store keeps its own copy, wiped when it is destroyed;
  // the caller wipes this one.
  std::array<uint8_t, 32> masterKey{};
  std::string masterKeyOrigin = "the configured master key (security.keys)";
};

class PostgresKeyStore : public compliance::KeyStore {
 public:
  explicit PostgresKeyStore(PostgresKeyStoreOptions options);
  ~PostgresKeyStore() override;

  compliance::DataKey getOrCreate(const std::string& subject) override;
  std::optional<compliance::DataKey> find(const std::string& subject,
                                          const std::string& keyId) const override;
  bool shred(const std::string& subject) override;
  bool wasShredded(const std::string& subject) const override;
  std::vector<std::string> subjects() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::postgres
