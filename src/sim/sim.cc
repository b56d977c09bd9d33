#include "sim.h"

#include <unistd.h>

#include "loom/util/error.h"
#include "world.h"

namespace loom::sim {
namespace {

// A fresh folder for one seed's home, removed when the seed is done.
class SeedHome {
 public:
  SeedHome(const std::filesystem::path& scratch, uint64_t seed) {
    std::filesystem::path base =
        scratch.empty() ? std::filesystem::temp_directory_path() : scratch;
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

}  // namespace

SeedReport runSeed(const SeedOptions& options) {
  SeedHome home(options.scratch, options.seed);
  SeedReport report;
  {
    World world(options, home.path() / "home");
    report = world.run();
  }
  return report;
}

std::string replayCommand(uint64_t seed) {
  return "loom sim --from " + std::to_string(seed) + " --seeds 1 --trace";
}

}  // namespace loom::sim
