#include "loom/postgres/postgres_blob_ledger.h"

#include "pg_pool.h"
#include "pg_schema.h"

namespace loom::postgres {

struct PostgresBlobLedgerRows::Impl {
  explicit Impl(const PostgresOptions& options)
      : clock(options.clock), pool(options.url, options.schema, options.maxIdleConnections) {
    auto conn = pool.acquire();
    schema::check(*conn);
  }
  const std::shared_ptr<const Clock> clock;
  mutable Pool pool;
};

PostgresBlobLedgerRows::PostgresBlobLedgerRows(const PostgresOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}

PostgresBlobLedgerRows::~PostgresBlobLedgerRows() = default;

void PostgresBlobLedgerRows::add(const std::string& subject, std::string_view address) {
  withConnection(impl_->pool, [&](Connection& conn) {  // an upsert: safe to run twice
    return conn.exec(
        "INSERT INTO subject_blobs (subject, address, put_at) VALUES ($1, $2, $3) "
        "ON CONFLICT (subject, address) DO UPDATE SET put_at = excluded.put_at",
        {Param::text(subject), Param::text(address), Param::int64(nowMillis(conn, impl_->clock))},
        "record a put in the blob ledger");
  });
}

std::set<std::string, std::less<>> PostgresBlobLedgerRows::addressesOf(
    const std::string& subject) const {
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec("SELECT address FROM subject_blobs WHERE subject = $1", {Param::text(subject)},
                     "read the blob ledger");
  });
  std::set<std::string, std::less<>> out;
  for (int row = 0; row < r.rows(); ++row) out.emplace(r.text(row, 0));
  return out;
}

void PostgresBlobLedgerRows::forEachOtherPut(
    const std::string& subject, const std::vector<std::string>& addresses,
    const std::function<void(std::string_view, std::string_view, int64_t)>& visit) const {
  json::array list(addresses.begin(), addresses.end());
  std::string listText = json::toText(list);
  // One statement for every address (subject_blobs_by_address serves each), as a JSON array.
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec(
        "SELECT address, subject, put_at FROM subject_blobs WHERE subject <> $1 AND address IN "
        "(SELECT jsonb_array_elements_text($2::jsonb))",
        {Param::text(subject), Param::text(listText)}, "read the blob ledger");
  });
  for (int row = 0; row < r.rows(); ++row) visit(r.text(row, 0), r.text(row, 1), r.int64(row, 2));
}

void PostgresBlobLedgerRows::forget(const std::string& subject,
                                    const std::vector<std::string>& addresses) {
  inTransaction(impl_->pool, "BEGIN", [&](Connection& conn) {
    for (const auto& a : addresses) {
      conn.exec("DELETE FROM subject_blobs WHERE subject = $1 AND address = $2",
                {Param::text(subject), Param::text(a)}, "forget an erased blob in the blob ledger");
    }
  });
}

}  // namespace loom::postgres
