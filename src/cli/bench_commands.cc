// `loom bench claim-check` (the measured table of ADR 0140) and `loom bench long-run` (cost
// per turn, resume and `loom state` of long runs); docs/benchmarks.md.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <sstream>

#include "claim_check_bench/claim_check_bench.h"
#include "command.h"
#include "long_run_bench/long_run_bench.h"
#include "text.h"

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

int runLongRun(Session& session, const std::string& turns, const std::string& tools,
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

}  // namespace

Action setupBench(CLI::App& command, Session& session) {
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
  command.add_option("WHICH", args->which, "claim-check or long-run")
      ->required()
      ->check(CLI::IsMember({"claim-check", "long-run"}));
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
  command.add_option("--stores", args->stores,
                     "Event stores: memory (the cloning log, as the record measured) and/or "
                     "sqlite (durable commits); default both")
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
      "and `loom state` time and peak RSS; MB = 10^6 bytes.");
  return [&session, args] {
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
