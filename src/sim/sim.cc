#include "sim.h"

#include <unistd.h>

#include "loom/postgres/postgres_event_store.h"
#include "loom/util/error.h"
#include "postgres/pg_connection.h"
#include "world.h"

namespace loom::sim {
namespace {

// A fresh folder for one seed's home, removed when the seed is done.
class SeedHome {
 public:
  SeedHome(const std::filesystem::path& scratch, uint64_t seed) {
    std::filesystem::path base = scratch.empty() ? std::filesystem::temp_directory_path() : scratch;
    path_ = base / ("loom-sim-" + std::to_string(::getpid()) + "-" + std::to_string(seed));
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    std::filesystem::create_directories(path_, ec);
    if (ec) {
      throw FailedPreconditionError("loom sim: cannot make the scratch folder " + path_.string() +
                                    ": " + ec.message() + "; pass --scratch with a writable one");
    }
  }
  ~SeedHome() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A fresh PostgreSQL schema for one seed, migrated, and dropped when the seed is done.
class SeedSchema {
 public:
  SeedSchema(const std::string& url, uint64_t seed)
      : url_(url), name_("loom_sim_" + std::to_string(::getpid()) + "_" + std::to_string(seed)) {
    if (url_.empty()) return;
    drop();  // a schema an earlier process of the same pid left
    postgres::migrate({.url = url_, .schema = name_});
  }
  ~SeedSchema() {
    try {
      if (!url_.empty()) drop();
    } catch (const std::exception&) {
      // The server went away: the schema stays, named after this process and seed.
    }
  }
  const std::string& name() const { return name_; }

 private:
  void drop() {
    postgres::Connection conn(url_, "public");
    conn.run(("DROP SCHEMA IF EXISTS " + name_ + " CASCADE").c_str(), "drop the seed's schema");
  }
  std::string url_;
  std::string name_;
};

}  // namespace

SeedReport runSeed(const SeedOptions& options) {
  SeedHome home(options.scratch, options.seed);
  SeedSchema schema(options.postgresUrl, options.seed);
  SeedReport report;
  {
    World world(options, home.path() / "home", schema.name());
    report = world.run();
  }
  return report;
}

std::string replayCommand(uint64_t seed, bool onPostgres) {
  return "loom sim --from " + std::to_string(seed) + " --seeds 1 --trace" +
         (onPostgres ? " --postgres <the same url>" : "");
}

}  // namespace loom::sim
