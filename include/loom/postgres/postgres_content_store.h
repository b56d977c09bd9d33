// The PostgreSQL ContentStore (SPI 1.6.0; docs/spec/postgresql.md): blobs as `bytea` rows of
// table `blobs` in the same schema as the PostgreSQL EventStore (created by postgres::migrate).
// Touch times come from the server's clock unless PostgresOptions::clock is set (tests), so
// every machine's sweep and puts agree on one clock; a put never moves a touch back, and
// deleteIfUntouchedSince is one statement, atomic with respect to concurrent puts. Blobs are
// read and written whole: keep them to tens of MB (execution.claimCheck offloads tool outputs,
// which are far smaller). Thread-safe; forEachBlob's visitor may call back into the store.
#pragma once

#include <memory>

#include "loom/content/content_store.h"
#include "loom/postgres/postgres_event_store.h"

namespace loom::postgres {

class PostgresContentStore : public content::ContentStore {
 public:
  // Connects and checks the schema version, as PostgresEventStore does.
  explicit PostgresContentStore(const PostgresOptions& options);
  ~PostgresContentStore() override;

  content::ContentCapabilities capabilities() const override;
  std::string put(std::string_view bytes,
                  const std::optional<std::string>& subject = std::nullopt) override;
  std::optional<std::string> get(
      std::string_view address,
      const std::optional<std::string>& subject = std::nullopt) const override;
  bool has(std::string_view address) const override;
  bool remove(std::string_view address) override;
  bool deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) override;
  int64_t touchClock() const override;
  void forEachBlob(const std::function<void(const content::BlobInfo&)>& visit) const override;
  std::optional<content::BlobInfo> stat(std::string_view address) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::postgres
