#include "snapshot_checks.h"

#include "loom/util/error.h"

namespace loom::kernel {

void checkSnapshotKey(const Snapshot& snapshot) {
  if (snapshot.executionId.empty()) {
    throw InvalidArgumentError("snapshot put without an execution id");
  }
  if (snapshot.seq < 1) {
    throw InvalidArgumentError("snapshot of execution '" + snapshot.executionId + "' at seq " +
                               std::to_string(snapshot.seq) + ": seq must be 1 or more");
  }
}

json::value parseSnapshotState(std::string_view text, std::string_view where,
                               const std::string& executionId, int64_t seq) {
  try {
    return json::parseStored(text, "state");
  } catch (const InvalidArgumentError& e) {
    throw DataLossError("snapshot of execution '" + executionId + "' at seq " +
                        std::to_string(seq) + " in " + std::string(where) +
                        " is corrupt: " + e.what() +
                        "; a resume ignores it and replays the log, and retention removes it");
  }
}

}  // namespace loom::kernel
