// `loom upgrade` (docs/operations.md "Deploying new code"): an operator moves a run that has
// not ended to the code at hand. The run's log is replayed against that code first, in memory
// (replay_check.h); only a run it replays to the log's end is moved, by CODE_UPGRADED
// {codeVersion, from} appended under the run's lease. From then on the run is pinned to the
// new version: the old code refuses it, the new code continues it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace loom::workflow {

struct UpgradeResult {
  std::string id;
  std::optional<std::string> from;  // the version it ran on (nullopt: it recorded none)
  std::string to;                   // the code at hand's
  bool upgraded = false;            // false: it was on `to` already; nothing was written
  int64_t replayedSteps = 0;        // recorded steps the code at hand asked for, as recorded
};

}  // namespace loom::workflow
