#include "loom/postgres/postgres_archive_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include "loom/util/error.h"
#include "pg_pool.h"
#include "pg_schema.h"
#include "util/io_error.h"
#include "util/unique_fd.h"

namespace loom::postgres {

namespace fs = std::filesystem;

struct PostgresArchiveStore::Impl {
  Impl(const PostgresOptions& options, fs::path staging)
      : pool(options.url, options.schema, options.maxIdleConnections),
        schemaName(options.schema),
        clock(options.clock),
        stagingDir(std::move(staging)) {}

  // The schema check, once, on first use: a process that never touches the archive (a run of
  // a worker) opens no connection for it.
  void check() {
    std::call_once(checked, [&] {
      auto conn = pool.acquire();
      schema::check(*conn);
    });
  }

  std::string locate(const std::string& name) const {
    return schemaName + ".archive_segments/" + name;
  }

  mutable Pool pool;
  std::once_flag checked;  // a throw leaves it unset: the next use checks again
  const std::string schemaName;
  const std::shared_ptr<const Clock> clock;
  const fs::path stagingDir;
};

namespace {

class PostgresSegmentBytes final : public sweep::SegmentBytes {
 public:
  PostgresSegmentBytes(std::shared_ptr<PostgresArchiveStore::Impl> store, std::string name,
                       int64_t size, int64_t chunkBytes)
      : store_(std::move(store)), name_(std::move(name)), size_(size), chunkBytes_(chunkBytes) {}

  int64_t size() const override { return size_; }

  std::string read(int64_t offset, std::size_t n, std::string_view what) const override {
    auto count = static_cast<int64_t>(n);
    if (offset < 0 || offset > size_ || count > size_ - offset) {
      throw DataLossError("archive segment '" + store_->locate(name_) +
                          "' is truncated: it ends inside " + std::string(what) + " (offset " +
                          std::to_string(offset) + ", " + std::to_string(n) + " bytes; it holds " +
                          std::to_string(size_) + ")");
    }
    std::string out;
    if (n == 0) return out;
    out.reserve(n);
    int64_t first = offset / chunkBytes_;
    int64_t last = (offset + count - 1) / chunkBytes_;
    Result r = withConnection(store_->pool, [&](Connection& conn) {
      return conn.exec(
          "SELECT chunk, bytes FROM archive_chunks WHERE segment = $1 AND chunk BETWEEN $2 AND "
          "$3 ORDER BY chunk",
          {Param::text(name_), Param::int64(first), Param::int64(last)}, "read archive chunks");
    });
    for (int64_t chunk = first; chunk <= last; ++chunk) {
      int row = static_cast<int>(chunk - first);
      if (row >= r.rows() || r.int64(row, 0) != chunk) missing(chunk, what);
      std::string_view bytes = r.text(row, 1);
      int64_t start = chunk * chunkBytes_;
      if (static_cast<int64_t>(bytes.size()) != std::min(chunkBytes_, size_ - start)) {
        throw DataLossError("archive segment '" + store_->locate(name_) + "' has a chunk " +
                            std::to_string(chunk) + " of " + std::to_string(bytes.size()) +
                            " bytes where " + std::to_string(std::min(chunkBytes_, size_ - start)) +
                            " belong: it is damaged (reading " + std::string(what) + ")");
      }
      int64_t from = std::max(offset, start) - start;
      int64_t to = std::min(offset + count, start + chunkBytes_) - start;
      out.append(bytes.substr(static_cast<std::size_t>(from), static_cast<std::size_t>(to - from)));
    }
    return out;
  }

 private:
  [[noreturn]] void missing(int64_t chunk, std::string_view what) const {
    throw DataLossError("archive segment '" + store_->locate(name_) + "' lacks its chunk " +
                        std::to_string(chunk) + " (reading " + std::string(what) +
                        "): rows of table archive_chunks were deleted behind Loom's back; "
                        "restore them from a backup");
  }

  std::shared_ptr<PostgresArchiveStore::Impl> store_;
  std::string name_;
  int64_t size_;
  int64_t chunkBytes_;
};

// Reads up to `n` bytes of `fd` into `out` (fewer only at the end of the file).
void readChunk(int fd, std::string& out, std::size_t n, const fs::path& path) {
  out.resize(n);
  std::size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd, out.data() + done, n - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      throwIoError(errno, "staged archive segment '" + path.string() + "': read");
    }
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  out.resize(done);
}

}  // namespace

PostgresArchiveStore::PostgresArchiveStore(const PostgresOptions& options, fs::path stagingDir)
    : impl_(std::make_shared<Impl>(options, std::move(stagingDir))) {}

PostgresArchiveStore::~PostgresArchiveStore() = default;

std::string PostgresArchiveStore::describe() const {
  return "the archive tables of postgresql schema '" + impl_->schemaName + "'";
}

std::string PostgresArchiveStore::locate(const std::string& name) const {
  return impl_->locate(name);
}

std::vector<std::string> PostgresArchiveStore::segmentNames() const {
  impl_->check();
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec("SELECT name FROM archive_segments ORDER BY name", {},
                     "list archive segments");
  });
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(r.rows()));
  for (int row = 0; row < r.rows(); ++row) out.emplace_back(r.text(row, 0));
  return out;
}

std::unique_ptr<sweep::SegmentBytes> PostgresArchiveStore::open(const std::string& name) const {
  sweep::requireSegmentName(name);
  impl_->check();
  Result r = withConnection(impl_->pool, [&](Connection& conn) {
    return conn.exec("SELECT bytes, chunk_bytes FROM archive_segments WHERE name = $1",
                     {Param::text(name)}, "open archive segment");
  });
  if (r.rows() == 0) {
    throw NotFoundError("archive segment '" + impl_->locate(name) + "' does not exist");
  }
  int64_t size = r.int64(0, 0);
  int64_t chunkBytes = r.int64(0, 1);
  if (size < 0 || chunkBytes <= 0) {
    throw DataLossError("archive segment '" + impl_->locate(name) + "' has a damaged row (" +
                        std::to_string(size) + " bytes in chunks of " + std::to_string(chunkBytes) +
                        ")");
  }
  return std::make_unique<PostgresSegmentBytes>(impl_, name, size, chunkBytes);
}

fs::path PostgresArchiveStore::stagingDir() const { return impl_->stagingDir; }

void PostgresArchiveStore::publish(const fs::path& staged, const std::string& name) {
  sweep::requireSegmentName(name);
  impl_->check();
  inTransaction(impl_->pool, "BEGIN", [&](Connection& conn) {
    UniqueFd fd(::open(staged.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) throwIoError(errno, "staged archive segment '" + staged.string() + "': open");
    int64_t now = nowMillis(conn, impl_->clock);
    Result claimed = conn.exec(
        "INSERT INTO archive_segments (name, bytes, chunk_bytes, published_at) "
        "VALUES ($1, 0, $2, $3) ON CONFLICT (name) DO NOTHING",
        {Param::text(name), Param::int64(kArchiveChunkBytes), Param::int64(now)},
        "publish archive segment");
    if (claimed.changed() == 0) {
      throw AlreadyExistsError("archive segment '" + impl_->locate(name) +
                               "' exists already; it was not replaced");
    }
    std::string chunk;
    int64_t size = 0;
    for (int64_t index = 0;; ++index) {
      readChunk(fd.get(), chunk, static_cast<std::size_t>(kArchiveChunkBytes), staged);
      if (chunk.empty()) break;
      conn.exec("INSERT INTO archive_chunks (segment, chunk, bytes) VALUES ($1, $2, $3)",
                {Param::text(name), Param::int64(index), Param::bytes(chunk)},
                "upload archive chunk");
      size += static_cast<int64_t>(chunk.size());
    }
    conn.exec("UPDATE archive_segments SET bytes = $2 WHERE name = $1",
              {Param::text(name), Param::int64(size)}, "record archive segment size");
  });
  std::error_code ec;  // published: the staged copy is no longer needed
  fs::remove(staged, ec);
}

}  // namespace loom::postgres
