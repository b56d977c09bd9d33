// `loom bench workers` (docs/benchmarks.md): N submitted agent runs, all runnable when one
// `loom worker --concurrency N` (a child of this process) starts; each of three model turns from a scripted model
// that takes `turnLatencyMillis` per turn, as a real model would, the first two calling a
// subprocess tool. For each (store, isolation, N): the wall time from the worker's start to
// the last run's end against the ideal (turns x latency), the worker's peak RSS (its process
// tree: the children and the tools' processes too), RSS per concurrent run, start-to-first-
// step p50/p99 (from the worker's start to each run's first model turn's start: its journaled
// end minus its latency: process start, boot, claim and replay) and the worker's CPU per
// journaled step. Submit-to-first-step of a single run with a worker waiting is
// bench/worker_bench.cc's.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loom/json/json.h"

namespace loom::worker_bench {

struct WorkerBenchOptions {
  std::vector<int64_t> runs{100, 1000};
  std::vector<std::string> isolations{"thread", "process"};
  std::vector<std::string> stores{"sqlite"};  // "postgres" needs databaseUrl
  std::string databaseUrl;
  std::string program;  // the loom binary the worker runs as
  int64_t turnLatencyMillis = 200;
  int toolCalls = 2;  // turns that call the subprocess tool, before the one that answers
  // "agent" (the above), or "steps": runs of the stock binary's example.steps, 3 steps that
  // each sleep turnLatencyMillis (the workload DBOS runs in bench/dbos, "workers").
  std::string workload = "agent";
  // Process isolation costs about 17 MB per run: rows above this many runs are skipped.
  int64_t maxProcessRuns = 200;
  std::function<void(const std::string&)> progress;  // one line per row started
};

struct WorkerBenchRow {
  std::string store;
  std::string isolation;
  int64_t runs = 0;
  std::string skipped;  // why the row was not measured; empty when it was
  int64_t completed = 0;
  double wallMillis = 0;
  double idealMillis = 0;      // turns (toolCalls + 1) x latency
  double toolFloorMillis = 0;  // the tool calls' CPU, measured here, over the cores
  int64_t peakRssBytes = 0;
  double firstStepP50Millis = 0;
  double firstStepP99Millis = 0;
  double cpuMicrosPerStep = 0;
  int64_t steps = 0;
};

// Throws what booting, the stores and the worker's start throw.
std::vector<WorkerBenchRow> runWorkerBench(const WorkerBenchOptions& options);
json::value toJson(const std::vector<WorkerBenchRow>& rows);
std::string formatWorkerBenchTable(const std::vector<WorkerBenchRow>& rows);

}  // namespace loom::worker_bench
