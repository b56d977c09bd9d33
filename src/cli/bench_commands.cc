// `loom bench claim-check`: the measured table of ADR 0140 (docs/benchmarks.md).
#include <CLI/CLI.hpp>
#include <sstream>

#include "claim_check_bench/claim_check_bench.h"
#include "command.h"

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

}  // namespace

Action setupBench(CLI::App& command, Session& session) {
  struct Args {
    std::string which;
    std::string turns = "50,200";
    std::string stores = "memory,sqlite";
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("WHICH", args->which, "claim-check")
      ->required()
      ->check(CLI::IsMember({"claim-check"}));
  command.add_option("--turns", args->turns, "Turn counts, comma-separated (default 50,200)")
      ->type_name("LIST");
  command.add_option("--stores", args->stores,
                     "Event stores: memory (the cloning log, as the record measured) and/or "
                     "sqlite (durable commits); default both")
      ->type_name("LIST");
  command.add_flag("--json", args->json,
                   "Print an array of rows {turns, claimCheck, journal, store, stateBytes, "
                   "logBytes, zstdStateRatio, wallSeconds}");
  command.footer(
      "Runs the record's harness (ADR 0140 \"Measured\"): a real app and agent loop, 1.5-4 kB\n"
      "of tool output per turn (uniform, fixed seed), no compaction; for each model-input\n"
      "journal (full: the record's setting; delta: ours), store and turn count, claim-check\n"
      "off / on (256-character preview) / on with preview = false. State is the folded agent\n"
      "state a resume reads; KB = 1000 bytes. Each row runs in a temporary home.");
  return [&session, args] {
    claim_check_bench::ClaimCheckBenchOptions options;
    options.turns = parseTurns(args->turns);
    options.stores.clear();
    std::stringstream in(args->stores);
    for (std::string s; std::getline(in, s, ',');) {
      if (s != "memory" && s != "sqlite") {
        throw UsageError("--stores: '" + s + "' is not memory or sqlite");
      }
      options.stores.push_back(s);
    }
    auto rows = claim_check_bench::runClaimCheckBench(options);
    session.out() << (args->json ? json::toText(claim_check_bench::toJson(rows)) + "\n"
                                 : claim_check_bench::formatClaimCheckTable(rows));
    return kExitOk;
  };
}

}  // namespace loom::cli
