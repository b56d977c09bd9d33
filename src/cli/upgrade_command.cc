// `loom upgrade ID...|--all --to-current`: moves runs that have not ended to the code at hand
// (WorkflowRuntime::upgrade, loom/workflow/upgrade.h), each only when its log replays there.
#include <CLI/CLI.hpp>

#include "code_at_hand.h"
#include "command.h"

namespace loom::cli {
namespace {

struct UpgradeArgs {
  std::vector<std::string> ids;
  bool all = false;
  bool toCurrent = false;
  std::string workflow;
  bool json = false;
};

std::vector<kernel::ExecutionInfo> selected(kernel::EventStore& store, const UpgradeArgs& a) {
  if (a.ids.empty() == !a.all) {
    throw UsageError(a.all ? "pass either run IDs or --all, not both"
                           : "name the runs to upgrade (IDs), or pass --all for every run that "
                             "has not ended");
  }
  if (!a.workflow.empty() && !a.all) throw UsageError("--workflow goes with --all");
  std::vector<kernel::ExecutionInfo> runs;
  if (a.all) {
    kernel::ExecutionFilter filter;
    if (!a.workflow.empty()) filter.workflow = a.workflow;
    kernel::forEachExecution(store, filter, [&](const kernel::ExecutionInfo& info) {
      if (!kernel::isEnded(info.status)) runs.push_back(info);
    });
    return runs;
  }
  for (const auto& id : a.ids) {
    auto info = store.info(id);
    if (!info) throw NotFoundError("no execution '" + id + "' (see `loom ls`)");
    runs.push_back(*info);
  }
  return runs;
}

struct Outcome {
  std::string outcome;  // "upgraded", "current", "refused"
  workflow::UpgradeResult result;
  std::string why;
};

// `alone`: the only run named, whose refusal is the command's error (its type and message).
Outcome upgradeOne(CodeAtHand& code, const kernel::ExecutionInfo& info, bool alone) {
  Outcome o{.outcome = "refused", .result = {.id = info.id}};
  try {
    HomeSession* session = code.sessionFor(info);
    if (session == nullptr) {
      throw FailedPreconditionError(
          "execution '" + info.id + "' runs workflow '" + info.workflow +
          "', which is not registered here, and its input names no agent app; run `loom "
          "upgrade` from the program that runs it");
    }
    o.result = session->runtime(false).upgrade(info.id);
    o.outcome = o.result.upgraded ? "upgraded" : "current";
  } catch (const Error& e) {
    if (alone) throw;
    o.why = e.what();
  }
  return o;
}

json::object outcomeJson(const Outcome& o) {
  json::object j{{"id", o.result.id}, {"outcome", o.outcome}};
  if (o.outcome == "refused") {
    j["why"] = o.why;
    return j;
  }
  j["from"] = o.result.from ? json::value(*o.result.from) : json::value(nullptr);
  j["to"] = o.result.to;
  if (o.outcome == "upgraded") j["replayedSteps"] = o.result.replayedSteps;
  return j;
}

void say(std::ostream& out, const Outcome& o) {
  if (o.outcome == "refused") {
    out << o.result.id << ": not upgraded: " << o.why << "\n";
  } else if (o.outcome == "current") {
    out << o.result.id << ": already on " << o.result.to << "\n";
  } else {
    out << o.result.id << ": upgraded from "
        << o.result.from.value_or("no version") << " to " << o.result.to << " ("
        << o.result.replayedSteps << " recorded step(s) replay on it)\n";
  }
}

}  // namespace

Action setupUpgrade(CLI::App& command, HomeSession& session) {
  auto args = std::make_shared<UpgradeArgs>();
  command.add_option("ID", args->ids, "The runs to move to the code at hand")->type_name("");
  command.add_flag("--all", args->all, "Every run that has not ended (of --workflow, if given)");
  command.add_flag("--to-current", args->toCurrent,
                   "Move them to the code at hand (this program; an agent app's run: its app "
                   "file as it is now). Required: the operator's say-so")
      ->required();
  command.add_option("--workflow", args->workflow, "With --all: only runs of this workflow")
      ->type_name("NAME");
  command.add_flag("--json", args->json,
                   "Print one JSON object {\"upgraded\",\"current\",\"refused\",\"runs\": "
                   "[{\"id\",\"outcome\"} plus \"from\",\"to\" (upgraded, current), "
                   "\"replayedSteps\" (upgraded), \"why\" (refused)]}");
  addConfigOption(command, session);
  command.footer(
      "Under execution.versioning = \"pinned\" a run continues only on the code version it\n"
      "recorded. Upgrading moves it: its log is replayed against the code at hand in memory\n"
      "first (as `loom replay-check` does), and only a run that replays to its log's end is\n"
      "moved, by CODE_UPGRADED {codeVersion, from} appended to its log under its lease. Nothing\n"
      "runs; a worker of the new version (or `loom resume`) continues it. A run that diverges,\n"
      "has ended or is running elsewhere is refused and left as it was: one named alone is the\n"
      "command's error; of several, each is reported and the exit is 1 when any was refused\n"
      "(docs/operations.md, \"Deploying new code\").");
  return [&session, args] {
    CodeAtHand code(session);
    int64_t upgraded = 0, current = 0, refused = 0;
    json::array runs;
    std::ostream& out = session.out();
    const bool alone = !args->all && args->ids.size() == 1;
    for (const auto& info : selected(session.store(false), *args)) {
      Outcome o = upgradeOne(code, info, alone);
      upgraded += o.outcome == "upgraded";
      current += o.outcome == "current";
      refused += o.outcome == "refused";
      if (args->json) {
        runs.push_back(outcomeJson(o));
      } else {
        say(out, o);
      }
    }
    if (args->json) {
      out << json::toText(json::object{{"upgraded", upgraded}, {"current", current},
                                       {"refused", refused}, {"runs", std::move(runs)}})
          << std::endl;
    } else {
      out << "upgraded " << upgraded << " run(s), " << current
          << " already on the code at hand, " << refused << " refused" << std::endl;
    }
    return refused > 0 ? kExitFailure : kExitOk;
  };
}

}  // namespace loom::cli
