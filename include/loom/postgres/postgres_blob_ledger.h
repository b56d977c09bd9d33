// The blob ledger's rows on PostgreSQL (table subject_blobs of the same schema as the
// PostgreSQL EventStore, created by postgres::migrate; put_at from the server's clock, as the
// key store's shred times are): compliance::BlobLedger(std::make_unique<
// PostgresBlobLedgerRows>(options)). Thread-safe.
#pragma once

#include <memory>

#include "loom/compliance/blob_ledger.h"
#include "loom/postgres/postgres_event_store.h"

namespace loom::postgres {

class PostgresBlobLedgerRows : public compliance::BlobLedgerRows {
 public:
  // Connects and checks the schema version, as PostgresEventStore does.
  explicit PostgresBlobLedgerRows(const PostgresOptions& options);
  ~PostgresBlobLedgerRows() override;

  void add(const std::string& subject, std::string_view address) override;
  std::set<std::string, std::less<>> addressesOf(const std::string& subject) const override;
  void forEachOtherPut(
      const std::string& subject, const std::vector<std::string>& addresses,
      const std::function<void(std::string_view, std::string_view, int64_t)>& visit)
      const override;
  void forget(const std::string& subject, const std::vector<std::string>& addresses) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::postgres
