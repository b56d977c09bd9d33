#include <filesystem>
#include <system_error>

#include "command.h"
#include "loom/kernel/sqlite_event_store.h"

namespace loom::cli {

Session::Session(const workflow::WorkflowRegistry& workflows, const effects::TaskRegistry& tasks,
                 std::ostream& out)
    : workflows_(workflows), tasks_(tasks), out_(out) {}

Session::~Session() = default;

std::filesystem::path Session::databasePath() const {
  return std::filesystem::path(options_.home) / "loom.db";
}

kernel::EventStore& Session::store(bool create) {
  if (store_) return *store_;
  kernel::Durability durability;
  try {
    durability = kernel::durabilityFromName(options_.durability);
  } catch (const InvalidArgumentError& e) {
    throw UsageError(std::string("--durability: ") + e.what());
  }
  std::filesystem::path db = databasePath();
  std::error_code ec;
  if (create) {
    std::filesystem::create_directories(options_.home, ec);
    if (ec) {
      throw FailedPreconditionError("cannot create the Loom home '" + options_.home +
                                    "': " + ec.message() +
                                    "; pass --home DIR (or set LOOM_HOME) to a writable folder");
    }
  } else if (!std::filesystem::exists(db, ec)) {
    throw NotFoundError("no Loom home at '" + options_.home + "' (it holds no loom.db); pass " +
                        "--home DIR or set LOOM_HOME to the folder `loom run` used");
  }
  store_ = std::make_unique<kernel::SqliteEventStore>(
      kernel::SqliteEventStoreOptions{.path = db.string(), .durability = durability});
  return *store_;
}

workflow::WorkflowRuntime& Session::runtime(bool create) {
  if (runtime_) return *runtime_;
  kernel::EventStore& events = store(create);
  runtime_ = std::make_unique<workflow::WorkflowRuntime>(events, workflows_, tasks_, nullptr,
                                                         workflow::RuntimeOptions{.workers = 1});
  return *runtime_;
}

}  // namespace loom::cli
