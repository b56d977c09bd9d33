// `loom replay-check`: recorded runs replayed against the code at hand, in memory
// (workflow::checkReplay); exit 1 when any diverged or could not be checked.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>

#include "code_at_hand.h"
#include "command.h"
#include "loom/workflow/replay_check.h"

namespace loom::cli {
namespace {

struct ReplayCheckArgs {
  std::string workflow;
  std::string since;
  int64_t last = 0;
  bool json = false;
};

// The runs to check, newest first: of --workflow, started at or after --since, the --last N.
std::vector<kernel::ExecutionInfo> selected(kernel::EventStore& store, const ReplayCheckArgs& a) {
  kernel::ExecutionFilter filter;
  if (!a.workflow.empty()) filter.workflow = a.workflow;
  std::optional<int64_t> since;
  if (!a.since.empty()) since = parseSinceMillis(a.since, systemClock()->nowMillis());
  std::vector<kernel::ExecutionInfo> runs;
  kernel::forEachExecution(store, filter, [&](const kernel::ExecutionInfo& info) {
    if (!since || info.startedAtMillis >= *since) runs.push_back(info);
  });
  std::stable_sort(runs.begin(), runs.end(), [](const auto& x, const auto& y) {
    return x.startedAtMillis > y.startedAtMillis;
  });
  if (a.last > 0 && runs.size() > static_cast<std::size_t>(a.last)) runs.resize(a.last);
  return runs;
}

class Checker {
 public:
  explicit Checker(HomeSession& session) : session_(session), code_(session) {}

  workflow::ReplayCheckResult check(const kernel::ExecutionInfo& info) {
    kernel::EventStore& store = session_.store(false);
    try {
      const HomeSession* code = code_.sessionFor(info);
      if (code == nullptr) {
        return {.executionId = info.id, .outcome = "unchecked",
                .recorded = "its workflow '" + info.workflow +
                            "' is not registered here and its input names no agent app"};
      }
      return workflow::checkReplay(info.id, store.read(info.id), code->workflows(),
                                   code->tasks());
    } catch (const Error& e) {
      return {.executionId = info.id, .outcome = "unchecked", .recorded = e.what()};
    }
  }

 private:
  HomeSession& session_;
  CodeAtHand code_;
};

json::object resultJson(const workflow::ReplayCheckResult& r) {
  json::object o{{"id", r.executionId}, {"outcome", r.outcome}};
  if (r.outcome == "diverged") {
    o["stepId"] = r.stepId;
    o["recorded"] = r.recorded;
    o["asked"] = r.asked;
  } else if (r.outcome == "unchecked") {
    o["why"] = r.recorded;
  } else {
    o["replayedSteps"] = r.replayedSteps;
  }
  return o;
}

}  // namespace

Action setupReplayCheck(CLI::App& command, HomeSession& session) {
  auto args = std::make_shared<ReplayCheckArgs>();
  command.add_option("--workflow", args->workflow, "Only runs of this workflow (or agent)")
      ->type_name("NAME");
  command.add_option("--since", args->since,
                     "Only runs started at or after this time (RFC 3339, e.g. "
                     "2026-12-01T00:00:00.000Z) or this long ago (24h, 7d)")
      ->type_name("T");
  command.add_option("--last", args->last, "Only the N runs started last")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  command.add_flag("--json", args->json,
                   "Print one JSON object {\"checked\",\"matched\",\"diverged\",\"unchecked\","
                   "\"runs\": [{\"id\",\"outcome\"} plus, diverged: \"stepId\",\"recorded\","
                   "\"asked\"; unchecked: \"why\"; matched: \"replayedSteps\"]}");
  addConfigOption(command, session);
  command.footer(
      "Replays each recorded run against the code at hand (this program's workflows; an agent\n"
      "app run against its app file as it is now), in memory: nothing runs, every step\n"
      "returns what the log recorded, and no log is written. A run diverged when the code\n"
      "never asks for a step the log recorded (renamed, removed, moved after a step the log\n"
      "does not hold) or asks for it as another effect, or asks for more after the run\n"
      "completed. A run whose code cannot be found, or which was erased, is unchecked. Exit\n"
      "1 when any run diverged or was unchecked: run it in CI against recorded homes before\n"
      "deploying (docs/operations.md, \"Replay checks\").");
  return [&session, args] {
    Checker checker(session);
    json::array runs;
    int64_t matched = 0, diverged = 0, unchecked = 0;
    std::ostream& out = session.out();
    for (const auto& info : selected(session.store(false), *args)) {
      workflow::ReplayCheckResult r = checker.check(info);
      if (r.outcome == "matched") ++matched;
      if (r.outcome == "diverged") ++diverged;
      if (r.outcome == "unchecked") ++unchecked;
      if (args->json) {
        runs.push_back(resultJson(r));
      } else if (r.outcome == "diverged") {
        out << r.executionId << ": diverged at " << r.stepId << ": the log recorded "
            << r.recorded << "; the code " << r.asked << "\n";
      } else if (r.outcome == "unchecked") {
        out << r.executionId << ": unchecked: " << r.recorded << "\n";
      }
    }
    int64_t checked = matched + diverged + unchecked;
    if (args->json) {
      out << json::toText(json::object{{"checked", checked}, {"matched", matched},
                                       {"diverged", diverged}, {"unchecked", unchecked},
                                       {"runs", std::move(runs)}})
          << std::endl;
    } else {
      out << "checked " << checked << " run(s): " << matched << " matched, " << diverged
          << " diverged, " << unchecked << " unchecked" << std::endl;
    }
    return diverged + unchecked > 0 ? kExitFailure : kExitOk;
  };
}

}  // namespace loom::cli
