// `loom bench long-run`: what an agent's cost per turn does as its run grows (issue "Long runs
// stay linear"). For each turn count, tool kind (an in-process C++ tool, or a subprocess tool
// started per call) and claim-check setting, a real app runs the agent in a child process on
// a fresh home (SQLite, durable commits, the filesystem content store, delta journaling):
// N turns of fetch_report (1.5-4 kB of JSON each), then one approval-gated call, where it
// parks. Measured per row: the run's CPU and wall per turn and peak RSS (the child's own
// rusage, tools excluded), the log's bytes, the blobs' bytes, the disk the home takes, a resume of the parked run in a fresh process (from
// the park's snapshot, or replaying every turn with snapshots off; it parks again), and `loom
// state` of it (the real CLI): time and peak RSS. Not thread-safe; forks, so call it before starting threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/json/json.h"

namespace loom::long_run_bench {

struct LongRunBenchOptions {
  std::vector<int64_t> turns{200, 1000, 5000, 10000};
  std::vector<std::string> tools{"inProcess", "subprocess"};
  std::vector<std::string> claimChecks{"off", "on"};
  // "on": execution.snapshotEveryEvents at its default (1000); "off": 0, no snapshots.
  std::vector<std::string> snapshots{"on"};
  std::string loomBinary;  // runs `loom state`; empty = this program
  uint32_t seed = 140;
};

struct LongRunBenchRow {
  int64_t turns = 0;
  std::string tool;
  std::string claimCheck;
  std::string snapshots;
  double runCpuSeconds = 0;  // CPU of the run in the process running the agent (tools excluded)
  double runWallSeconds = 0;
  int64_t runPeakRssBytes = 0;  // of that process
  int64_t logBytes = 0;
  int64_t blobBytes = 0;  // the content store's blobs after the run (0 with claim-check off)
  int64_t homeBytes = 0;  // disk the home takes after the run: allocated blocks of its files
  double resumeMillis = 0;      // the resume call alone (it parks again)
  double resumeBootMillis = 0;  // boot of the app before it
  double stateMillis = 0;       // `loom state <id>` wall, process start to exit
  int64_t statePeakRssBytes = 0;
};

std::vector<LongRunBenchRow> runLongRunBench(const LongRunBenchOptions& options);

// A Markdown table: per-turn CPU and wall (ms), peak RSS (MB), log, blob and home disk (MB),
// resume and state.
std::string formatLongRunTable(const std::vector<LongRunBenchRow>& rows);
json::value toJson(const std::vector<LongRunBenchRow>& rows);

}  // namespace loom::long_run_bench
