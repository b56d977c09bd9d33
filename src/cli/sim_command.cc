// `loom sim`: the deterministic simulator (src/sim, docs/testing.md).
#include <CLI/CLI.hpp>
#include <chrono>
#include <limits>

#include "command.h"
#include "loom/util/clock.h"
#include "sim/sim.h"

namespace loom::cli {
namespace {

struct SimArgs {
  uint64_t seeds = 100;
  uint64_t from = 1;
  std::string budget;
  std::string scratch;
  bool trace = false;
  bool json = false;
  std::string postgres;
};

std::string countsText(const std::map<std::string, int64_t>& counts) {
  std::string text;
  for (const auto& [name, n] : counts) {
    text += (text.empty() ? "" : ", ") + name + " " + std::to_string(n);
  }
  return text;
}

json::object toJson(const sim::SeedReport& r, bool onPostgres) {
  json::object counts;
  for (const auto& [name, n] : r.counts) counts[name] = n;
  json::array violations;
  for (const auto& v : r.violations) violations.push_back(json::value(v));
  return {{"seed", r.seed},
          {"passed", r.passed()},
          {"violations", std::move(violations)},
          {"counts", std::move(counts)},
          {"replay", sim::replayCommand(r.seed, onPostgres)}};
}

}  // namespace

Action setupSim(CLI::App& command, HomeSession& session) {
  auto args = std::make_shared<SimArgs>();
  command.add_option("--seeds", args->seeds, "How many seeds to run (default 100)")
      ->check(CLI::Range(uint64_t{1}, std::numeric_limits<uint64_t>::max()));
  command.add_option("--from", args->from, "The first seed (default 1)");
  command
      .add_option("--budget", args->budget,
                  "Stop starting seeds after this long (\"2m\", \"30s\"); default: no limit")
      ->type_name("DURATION");
  command.add_option("--scratch", args->scratch,
                     "Where each seed's home is made and removed (default: the temp folder)");
  command
      .add_option("--postgres", args->postgres,
                  "Run every store on this PostgreSQL server instead of the embedded default, "
                  "each seed in a schema of its own (loom_sim_<pid>_<seed>, dropped after)")
      ->type_name("URL");
  command.add_flag("--trace", args->trace, "Print every seed's trace: what happened, in order");
  command.add_flag("--json", args->json, "One JSON object per seed, then a summary object");
  command.footer(
      "Runs seeded worlds over the real runtime and the embedded default's stores (or\n"
      "PostgreSQL's, with --postgres): runs of a\n"
      "workload with tool calls, claim-check, sealed subjects, approvals, timers, retries and\n"
      "cancels, two runners and an operator, a manual clock; crashes at chosen writes, disk\n"
      "faults (ENOSPC, EIO), lease takeovers, clock jumps, duplicate and late signals, and\n"
      "sweeps, retention runs and erasures inside other runs' writes. Each seed ends by\n"
      "driving every run to its end, then checks the invariants (docs/testing.md). A failing\n"
      "seed prints the command that replays it exactly. Exit 1 when any seed failed.");
  return [&session, args] {
    int64_t budget = 0;
    try {
      if (!args->budget.empty()) budget = parseDurationMillis(args->budget);
    } catch (const InvalidArgumentError& e) {
      throw UsageError(std::string("--budget: ") + e.what());
    }
    auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - start)
          .count();
    };
    bool onPostgres = !args->postgres.empty();
    std::map<std::string, int64_t> totals;
    std::vector<uint64_t> failed;
    uint64_t ran = 0;
    for (uint64_t seed = args->from; ran < args->seeds; ++seed, ++ran) {
      if (budget > 0 && elapsed() >= budget) break;
      sim::SeedReport r = sim::runSeed({.seed = seed,
                                        .scratch = args->scratch,
                                        .trace = args->trace,
                                        .postgresUrl = args->postgres});
      for (const auto& [name, n] : r.counts) totals[name] += n;
      if (!r.passed()) failed.push_back(seed);
      if (args->json) {
        session.out() << json::toText(toJson(r, onPostgres)) << "\n";
        continue;
      }
      for (const auto& line : r.trace) session.out() << "seed " << seed << ": " << line << "\n";
      if (r.passed()) continue;
      session.out() << "seed " << seed << ": FAILED\n";
      for (const auto& v : r.violations) session.out() << "  " << v << "\n";
      session.out() << "  replay: " << sim::replayCommand(seed, onPostgres) << "\n";
    }
    if (args->json) {
      json::array seeds;
      for (uint64_t s : failed) seeds.push_back(s);
      json::object counts;
      for (const auto& [name, n] : totals) counts[name] = n;
      session.out() << json::toText(json::object{{"seeds", ran},
                                                 {"from", args->from},
                                                 {"failed", std::move(seeds)},
                                                 {"elapsedMs", elapsed()},
                                                 {"counts", std::move(counts)}})
                    << "\n";
    } else {
      session.out() << "loom sim: " << ran << " seed(s) from " << args->from << " in "
                    << elapsed() / 1000.0 << " s: " << failed.size() << " failed\n"
                    << "  " << countsText(totals) << "\n";
    }
    return failed.empty() ? kExitOk : 1;
  };
}

}  // namespace loom::cli
