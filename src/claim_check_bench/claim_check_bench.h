// The measured-table harness of ADR 0140 (`loom bench claim-check`): a real app (boot with
// defineConfig) running a real agentLoop with a scripted model and one in-process tool whose
// output is 1.5-4 kB of JSON per turn (uniform, fixed seed), no compaction; for each journal
// mode, turn count, claim-check setting and event store it reports the folded agent state
// ("State", what a resume reads), the log, the zstd ratio of the state and the wall time.
// Not thread-safe; each row runs in its own temporary home.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/json/json.h"

namespace loom::claim_check_bench {

struct ClaimCheckBenchOptions {
  std::vector<int64_t> turns{50, 200};
  std::vector<std::string> journals{"full", "delta"};  // execution.journal.modelInput
  std::vector<std::string> claimChecks{"off", "on", "on-no-preview"};
  std::vector<std::string> stores{"memory", "sqlite"};  // the cloning log, and SQLite
  uint32_t seed = 140;
};

struct ClaimCheckBenchRow {
  int64_t turns = 0;
  std::string claimCheck;
  std::string journal;
  std::string store;
  int64_t stateBytes = 0;
  int64_t logBytes = 0;
  double zstdStateRatio = 0;  // state bytes / zstd-compressed state bytes
  double wallSeconds = 0;
};

std::vector<ClaimCheckBenchRow> runClaimCheckBench(const ClaimCheckBenchOptions& options);

// The benchmark tool's result for `page`: 1.5-4 kB of JSON text, uniform in size,
// deterministic from (seed, page). Also the output of `loom bench long-run`'s tools.
json::value reportFor(uint32_t seed, int64_t page);

// The rows as a Markdown table (KB = 1000 bytes), with on/off ratios per turn count, and the
// record's figures beside the full-journal memory rows.
std::string formatClaimCheckTable(const std::vector<ClaimCheckBenchRow>& rows);
json::value toJson(const std::vector<ClaimCheckBenchRow>& rows);

}  // namespace loom::claim_check_bench
