#include "loom/postgres/postgres_content_store.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

#include "content/store_support.h"
#include "pg_pool.h"
#include "pg_schema.h"

namespace loom::postgres {
namespace {

// Rows read per round trip by forEachBlob, whose visitor runs with no connection held.
constexpr int64_t kEnumeratePage = 512;

}  // namespace

struct PostgresContentStore::Impl {
  explicit Impl(const PostgresOptions& options)
      : clock(options.clock),
        pool(options.url, options.schema, options.maxIdleConnections),
        name("postgresql content store (schema '" + options.schema + "')") {
    auto conn = pool.acquire();
    schema::check(*conn);
  }

  // The touch clock: the injected clock or the server's, never going back within this store.
  int64_t now(Connection& conn) const {
    int64_t t = postgres::nowMillis(conn, clock);
    int64_t seen = last.load();
    while (t > seen && !last.compare_exchange_weak(seen, t)) {
    }
    return std::max(t, last.load());
  }

  const std::shared_ptr<const Clock> clock;
  mutable Pool pool;
  const std::string name;
  mutable std::atomic<int64_t> last{std::numeric_limits<int64_t>::min()};
};

PostgresContentStore::PostgresContentStore(const PostgresOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}

PostgresContentStore::~PostgresContentStore() = default;

content::ContentCapabilities PostgresContentStore::capabilities() const {
  return {.remove = true,
          .deleteIfUntouchedSince = true,
          .touchClock = true,
          .enumerate = true,
          .sealsContent = false};
}

std::string PostgresContentStore::put(std::string_view bytes, const std::optional<std::string>&) {
  std::string address = content::sha256Hex(bytes);
  // An upsert (safe to run twice): rewrites the bytes (repairing a corrupt row) and never moves
  // the touch back.
  withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec(
        "INSERT INTO blobs (address, bytes, size, touched_at) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (address) DO UPDATE SET bytes = excluded.bytes, size = excluded.size, "
        "touched_at = GREATEST(blobs.touched_at, excluded.touched_at)",
        {Param::text(address), Param::bytes(bytes),
         Param::int64(static_cast<int64_t>(bytes.size())), Param::int64(impl_->now(conn))},
        "put blob " + address);
  });
  return address;
}

std::optional<std::string> PostgresContentStore::get(std::string_view address,
                                                     const std::optional<std::string>&) const {
  content::detail::requireAddress(address, impl_->name);
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec("SELECT bytes FROM blobs WHERE address = $1", {Param::text(address)},
                     "get blob " + std::string(address));
  });
  if (r.rows() == 0) return std::nullopt;
  std::string bytes(r.text(0, 0));
  content::detail::verifyBytes(bytes, address, impl_->name);
  return bytes;
}

bool PostgresContentStore::has(std::string_view address) const {
  content::detail::requireAddress(address, impl_->name);
  return withConnection(impl_->pool, [&](Connection& conn) {
           return conn.exec("SELECT 1 FROM blobs WHERE address = $1", {Param::text(address)},
                            "look up blob " + std::string(address));
         }).rows() > 0;
}

bool PostgresContentStore::remove(std::string_view address) {
  content::detail::requireAddress(address, impl_->name);
  auto conn = impl_->pool.acquire();
  return conn->exec("DELETE FROM blobs WHERE address = $1", {Param::text(address)},
                    "remove blob " + std::string(address))
             .changed() > 0;
}

bool PostgresContentStore::deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) {
  content::detail::requireAddress(address, impl_->name);
  auto conn = impl_->pool.acquire();
  return conn->exec("DELETE FROM blobs WHERE address = $1 AND touched_at < $2",
                    {Param::text(address), Param::int64(cutoffMillis)},
                    "delete blob " + std::string(address) + " if untouched")
             .changed() > 0;
}

int64_t PostgresContentStore::touchClock() const {
  return withConnection(impl_->pool, [&](Connection& conn) { return impl_->now(conn); });
}

void PostgresContentStore::forEachBlob(
    const std::function<void(const content::BlobInfo&)>& visit) const {
  std::string after;
  for (;;) {
    std::vector<content::BlobInfo> page;
    {
      Result r = withConnection(impl_->pool, [&](Connection& conn) {
        return conn.exec(
            "SELECT address, size, touched_at FROM blobs WHERE address > $1 ORDER BY address "
            "LIMIT $2",
            {Param::text(after), Param::int64(kEnumeratePage)}, "enumerate blobs");
      });
      for (int row = 0; row < r.rows(); ++row) {
        page.push_back({std::string(r.text(row, 0)), r.int64(row, 1), r.int64(row, 2)});
      }
    }
    if (page.empty()) return;
    after = page.back().address;
    for (const auto& b : page) visit(b);
    if (static_cast<int64_t>(page.size()) < kEnumeratePage) return;
  }
}

std::optional<content::BlobInfo> PostgresContentStore::stat(std::string_view address) const {
  content::detail::requireAddress(address, impl_->name);
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec("SELECT size, touched_at FROM blobs WHERE address = $1",
                     {Param::text(address)}, "stat blob " + std::string(address));
  });
  if (r.rows() == 0) return std::nullopt;
  return content::BlobInfo{std::string(address), r.int64(0, 0), r.int64(0, 1)};
}

}  // namespace loom::postgres
