// `loom bench claim-check` (the measured table of ADR 0140) and `loom bench long-run` (cost
// per turn, resume and `loom state` of long runs); docs/benchmarks.md.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <sstream>

#include "claim_check_bench/claim_check_bench.h"
#include "command.h"
#include "util/this_program.h"
#include "long_run_bench/long_run_bench.h"
#include "text.h"
#include "workers_bench/worker_bench.h"

namespace loom::cli {
namespace {

std::vector<int64_t> parseTurns(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      std::size_t used = 0;
      int64_t n = std::stoll(item, &used);
      if (used != item.size() || n < 1 || n > 100000) throw std::invalid_argument(item);
      out.push_back(n);
    } catch (const std::logic_error&) {
      throw UsageError("--turns: '" + item + "' is not a turn count from 1 to 100000; write e.g. "
                       "--turns 50,200");
    }
  }
  if (out.empty()) throw UsageError("--turns: give at least one turn count, e.g. --turns 50,200");
  return out;
}

// A comma-separated list whose items are each one of `allowed`.
std::vector<std::string> parseList(const std::string& text, std::string_view flag,
                                   const std::vector<std::string>& allowed) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (std::find(allowed.begin(), allowed.end(), item) == allowed.end()) {
      std::string names;
      for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
      throw UsageError(std::string(flag) + ": '" + item + "' is not one of " + names);
    }
    out.push_back(item);
  }
  if (out.empty()) throw UsageError(std::string(flag) + ": give at least one of them");
  return out;
}

int runLongRun(HomeSession& session, const std::string& turns, const std::string& tools,
               const std::string& claimChecks, const std::string& snapshots, bool asJson) {
  long_run_bench::LongRunBenchOptions options;
  options.turns = parseTurns(turns);
  options.tools = parseList(tools, "--tools", {"inProcess", "subprocess"});
  options.claimChecks = parseList(claimChecks, "--claim-check", {"off", "on"});
  options.snapshots = parseList(snapshots, "--snapshots", {"on", "off"});
  auto rows = long_run_bench::runLongRunBench(options);
  session.out() << (asJson ? readableJson(long_run_bench::toJson(rows)) + "\n"
                           : long_run_bench::formatLongRunTable(rows));
  return kExitOk;
}

struct WorkersArgs {
  std::string runs = "100,1000";
  std::string isolations = "thread,process";
  int64_t latencyMillis = 200;
  int64_t maxProcessRuns = 200;
  int toolCalls = 2;
  std::string workload = "agent";
};

int runWorkers(HomeSession& session, const WorkersArgs& args, const std::string* stores,
               bool asJson) {
  worker_bench::WorkerBenchOptions options;
  options.runs = parseTurns(args.runs);
  options.isolations = parseList(args.isolations, "--isolation", {"thread", "process"});
  const char* url = std::getenv("LOOM_DATABASE_URL");
  options.databaseUrl = url != nullptr ? url : "";
  options.stores = stores != nullptr ? parseList(*stores, "--stores", {"sqlite", "postgres"})
                   : options.databaseUrl.empty() ? std::vector<std::string>{"sqlite"}
                                                 : std::vector<std::string>{"sqlite", "postgres"};
  options.program = thisProgram("loom bench workers");
  options.turnLatencyMillis = args.latencyMillis;
  options.maxProcessRuns = args.maxProcessRuns;
  options.toolCalls = args.toolCalls;
  options.workload = args.workload;
  options.progress = [](const std::string& row) { std::fprintf(stderr, "bench: %s\n", row.c_str()); };
  auto rows = worker_bench::runWorkerBench(options);
  session.out() << (asJson ? readableJson(worker_bench::toJson(rows)) + "\n"
                           : worker_bench::formatWorkerBenchTable(rows));
  return kExitOk;
}

}  // namespace

Action setupBench(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string which;
    std::string turns;
    std::string stores = "memory,sqlite";
    std::string tools = "inProcess,subprocess";
    std::string claimChecks = "off,on";
    std::string snapshots = "on";
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto workers = std::make_shared<WorkersArgs>();
  command.add_option("WHICH", args->which, "claim-check, long-run or workers")
      ->required()
      ->check(CLI::IsMember({"claim-check", "long-run", "workers"}));
  command
      .add_option("--runs", workers->runs,
                  "workers: run counts, comma-separated (default 100,1000); each is submitted "
                  "at once to one worker with that --concurrency")
      ->type_name("LIST");
  command
      .add_option("--isolation", workers->isolations,
                  "workers: thread and/or process (default both)")
      ->type_name("LIST");
  command
      .add_option("--latency-ms", workers->latencyMillis,
                  "workers: how long each of the 3 model turns takes (default 200)")
      ->check(CLI::Range(0, 60'000))
      ->type_name("MS");
  command
      .add_option("--workload", workers->workload,
                  "workers: agent (default: scripted model turns and a subprocess tool) or steps "
                  "(example.steps: 3 steps sleeping --latency-ms each, as bench/dbos runs on DBOS)")
      ->check(CLI::IsMember({"agent", "steps"}))
      ->type_name("KIND");
  command
      .add_option("--tool-calls", workers->toolCalls,
                  "workers: model turns that call the subprocess tool before the one that "
                  "answers (default 2: 3 turns; 0: one turn, no tool)")
      ->check(CLI::Range(0, 2))
      ->type_name("N");
  command
      .add_option("--max-process-runs", workers->maxProcessRuns,
                  "workers: skip --isolation process above this many runs (default 200: about "
                  "17 MB each)")
      ->check(CLI::Range(1, 100'000))
      ->type_name("N");
  command
      .add_option("--turns", args->turns,
                  "Turn counts, comma-separated (default 50,200 for claim-check; "
                  "200,1000,5000,10000 for long-run)")
      ->type_name("LIST");
  command
      .add_option("--tools", args->tools,
                  "long-run: tool kinds, inProcess (a C++ tool) and/or subprocess (a program "
                  "started per call); default both")
      ->type_name("LIST");
  command
      .add_option("--claim-check", args->claimChecks,
                  "long-run: claim-check settings, off and/or on; default both")
      ->type_name("LIST");
  command
      .add_option("--snapshots", args->snapshots,
                  "long-run: on (execution.snapshotEveryEvents = 1000, the default) and/or off "
                  "(0: every resume replays the whole log); default on")
      ->type_name("LIST");
  CLI::Option* stores =
      command
          .add_option("--stores", args->stores,
                      "Event stores: memory (the cloning log, as the record measured) and/or "
                      "sqlite (durable commits); default both. workers: sqlite and/or postgres "
                      "(LOOM_DATABASE_URL; default sqlite, and postgres when that is set)")
          ->type_name("LIST");
  command.add_flag("--json", args->json,
                   "Print an array of rows: claim-check {turns, claimCheck, journal, store, "
                   "stateBytes, logBytes, zstdStateRatio, wallSeconds}; long-run {turns, tool, "
                   "claimCheck, snapshots, runCpuSeconds, runWallSeconds, runPeakRssBytes, logBytes, "
                   "blobBytes, homeBytes, resumeMillis, resumeBootMillis, stateMillis, statePeakRssBytes}");
  command.footer(
      "Runs the record's harness (ADR 0140 \"Measured\"): a real app and agent loop, 1.5-4 kB\n"
      "of tool output per turn (uniform, fixed seed), no compaction; for each model-input\n"
      "journal (full: the record's setting; delta: ours), store and turn count, claim-check\n"
      "off / on (256-character preview) / on with preview = false. State is the folded agent\n"
      "state a resume reads; KB = 1000 bytes. Each row runs in a temporary home.\n\n"
      "long-run: for each turn count, tool kind, claim-check and snapshot setting, a child\n"
      "process runs an agent of N turns of fetch_report (1.5-4 kB each) on a fresh home\n"
      "(SQLite, durable commits, delta journaling) and parks at an approval; then a fresh\n"
      "process resumes it (from the park's snapshot, or replaying every turn with snapshots\n"
      "off), and `loom state` reads it. Prints CPU and wall per turn, peak RSS, log\n"
      "size, the blobs' bytes, the disk the home takes (allocated blocks), resume time\n"
      "and `loom state` time and peak RSS; MB = 10^6 bytes.\n\n"
      "workers: N agent runs (3 turns of a scripted model taking --latency-ms each, the first\n"
      "two calling a subprocess tool) submitted at once to one `loom worker --concurrency N`;\n"
      "prints the wall time against the ideal (3 x latency), the worker's peak RSS (its\n"
      "process tree) and per run, submit-to-first-step p50/p99 as journaled, and CPU per step.");
  return [&session, args, workers, stores] {
    if (args->which == "workers") {
      return runWorkers(session, *workers, stores->count() > 0 ? &args->stores : nullptr,
                        args->json);
    }
    if (args->which == "long-run") {
      return runLongRun(session, args->turns.empty() ? "200,1000,5000,10000" : args->turns,
                        args->tools, args->claimChecks, args->snapshots, args->json);
    }
    claim_check_bench::ClaimCheckBenchOptions options;
    options.turns = parseTurns(args->turns.empty() ? "50,200" : args->turns);
    options.stores.clear();
    std::stringstream in(args->stores);
    for (std::string s; std::getline(in, s, ',');) {
      if (s != "memory" && s != "sqlite") {
        throw UsageError("--stores: '" + s + "' is not memory or sqlite");
      }
      options.stores.push_back(s);
    }
    auto rows = claim_check_bench::runClaimCheckBench(options);
    session.out() << (args->json ? readableJson(claim_check_bench::toJson(rows)) + "\n"
                                 : claim_check_bench::formatClaimCheckTable(rows));
    return kExitOk;
  };
}

}  // namespace loom::cli
