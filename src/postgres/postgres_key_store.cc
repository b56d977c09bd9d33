#include "loom/postgres/postgres_key_store.h"

#include "compliance/key_wrapping.h"
#include "pg_pool.h"
#include "pg_schema.h"
#include "util/utf8.h"

namespace loom::postgres {

struct PostgresKeyStore::Impl {
  explicit Impl(PostgresKeyStoreOptions& o)
      : clock(o.database.clock),
        origin(o.masterKeyOrigin),
        where("postgresql schema '" + o.database.schema + "'"),
        master(o.masterKey),
        pool(o.database.url, o.database.schema, o.database.maxIdleConnections) {
    auto conn = pool.acquire();
    schema::check(*conn);
    checkMasterKey(*conn);
  }

  // The first store to open the schema records its master key's check value; every other
  // one (any process) must open it.
  void checkMasterKey(Connection& conn) {
    compliance::detail::CheckValue fresh = compliance::detail::newCheckValue(master);
    conn.exec(
        "INSERT INTO key_store_meta (name, value) VALUES ('check_nonce', $1), ('check', $2) "
        "ON CONFLICT (name) DO NOTHING",
        {Param::text(fresh.nonceHex), Param::text(fresh.sealedHex)}, "record the check value");
    Result r = conn.exec(
        "SELECT (SELECT value FROM key_store_meta WHERE name = 'check_nonce'), "
        "(SELECT value FROM key_store_meta WHERE name = 'check')",
        {}, "read the check value");
    compliance::detail::verifyCheckValue(master, r.optionalText(0, 0), r.optionalText(0, 1), where,
                                         origin);
  }

  std::optional<compliance::DataKey> current(Connection& conn, const std::string& subject) const {
    Result r = conn.exec("SELECT key_id, nonce, wrapped FROM subject_keys WHERE subject = $1",
                         {Param::text(subject)}, "read subject key");
    if (r.rows() == 0) return std::nullopt;
    return compliance::detail::unwrapKey(master, subject, r.text(0, 0), r.text(0, 1), r.text(0, 2),
                                         where);
  }

  const std::shared_ptr<const Clock> clock;
  const std::string origin;
  const std::string where;
  compliance::detail::SecretKey master;  // wiped on destruction
  mutable Pool pool;
};

PostgresKeyStore::PostgresKeyStore(PostgresKeyStoreOptions options) {
  struct WipeOnExit {  // the caller's copy in `options` is wiped however this ends
    compliance::detail::Key& key;
    ~WipeOnExit() { compliance::detail::wipe(key); }
  } wipeOptions{options.masterKey};
  impl_ = std::make_unique<Impl>(options);
}

PostgresKeyStore::~PostgresKeyStore() = default;

compliance::DataKey PostgresKeyStore::getOrCreate(const std::string& subject) {
  if (subject.empty()) throw InvalidArgumentError("a data subject must not be empty");
  requireUtf8(subject, "the data subject");
  return withConnection(impl_->pool, [&](Connection& conn) {
    if (auto key = impl_->current(conn, subject)) return std::move(*key);
    // Another process may create it at once: the first insert wins and both read it back.
    auto [created, wrapped] = compliance::detail::newWrappedKey(impl_->master, subject);
    conn.exec(
        "INSERT INTO subject_keys (subject, key_id, nonce, wrapped, created_at) "
        "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (subject) DO NOTHING",
        {Param::text(subject), Param::text(wrapped.keyId), Param::text(wrapped.nonceHex),
         Param::text(wrapped.wrappedHex), Param::int64(nowMillis(conn, impl_->clock))},
        "create subject key");
    auto key = impl_->current(conn, subject);
    if (!key) {
      throw UnavailableError("the key of subject '" + subject +
                             "' was shredded while it was being created; retry");
    }
    return std::move(*key);
  });
}

std::optional<compliance::DataKey> PostgresKeyStore::find(const std::string& subject,
                                                          const std::string& keyId) const {
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec("SELECT nonce, wrapped FROM subject_keys WHERE subject = $1 AND key_id = $2",
                     {Param::text(subject), Param::text(keyId)}, "find subject key");
  });
  if (r.rows() == 0) return std::nullopt;
  return compliance::detail::unwrapKey(impl_->master, subject, keyId, r.text(0, 0), r.text(0, 1),
                                       impl_->where);
}

bool PostgresKeyStore::shred(const std::string& subject) {
  bool deleted = inTransaction(impl_->pool, "BEGIN", [&](Connection& conn) {
    Result del = conn.exec("DELETE FROM subject_keys WHERE subject = $1", {Param::text(subject)},
                           "shred subject key");
    if (del.changed() == 0) return false;
    conn.exec(
        "INSERT INTO subject_key_tombstones (subject, shredded_at) VALUES ($1, $2) "
        "ON CONFLICT (subject) DO UPDATE SET shredded_at = excluded.shredded_at",
        {Param::text(subject), Param::int64(nowMillis(conn, impl_->clock))},
        "write shred tombstone");
    return true;
  });
  if (deleted) {
    // Best effort: reclaims the dead row so its bytes can be overwritten soon. The shred itself
    // is committed; a VACUUM that cannot run now (the table locked by autovacuum or another
    // shred's VACUUM: SKIP_LOCKED, or an old snapshot still needs the row) leaves that to
    // autovacuum.
    try {
      impl_->pool.acquire()->run("VACUUM (SKIP_LOCKED) subject_keys",
                                 "vacuum subject_keys after a shred");
    } catch (const Error&) {
    }
  }
  return deleted;
}

bool PostgresKeyStore::wasShredded(const std::string& subject) const {
  return withConnection(impl_->pool, [&](Connection& conn) {
           return conn.exec("SELECT 1 FROM subject_key_tombstones WHERE subject = $1",
                            {Param::text(subject)}, "read shred tombstone");
         }).rows() > 0;
}

std::vector<std::string> PostgresKeyStore::subjects() const {
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec("SELECT subject FROM subject_keys ORDER BY subject", {}, "list subjects");
  });
  std::vector<std::string> out;
  for (int row = 0; row < r.rows(); ++row) out.emplace_back(r.text(row, 0));
  return out;
}

}  // namespace loom::postgres
