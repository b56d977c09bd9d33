// Checks shared by the SnapshotStore implementations: the key of a put, and the parsing of a
// stored state text into DataLossError naming where it was found. Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "loom/json/json.h"
#include "loom/kernel/snapshot_store.h"

namespace loom::kernel {

// Throws InvalidArgumentError when the snapshot's execution id is empty or its seq below 1.
void checkSnapshotKey(const Snapshot& snapshot);

// Parses a stored state text. Throws DataLossError naming `where` (the store), the execution
// and the seq, and saying what a reader does about it, when the text is not JSON.
json::value parseSnapshotState(std::string_view text, std::string_view where,
                               const std::string& executionId, int64_t seq);

}  // namespace loom::kernel
