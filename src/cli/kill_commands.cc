// The operator's kill switch: kill, unkill, killed. The stops live in the kill_switch table of
// <home>/loom.db (middleware/kill_switch_store.h); every loom process using that home re-reads
// them at least every 250 ms, so a stop is seen within a second by runs already going.
#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "command.h"
#include "loom/kernel/event_store.h"
#include "loom/middleware/kill_switch_config.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"
#include "inspect/stops.h"
#include "text.h"

namespace loom::cli {
namespace {

using middleware::kAllEffects;
using middleware::KillSwitchEntry;

constexpr std::string_view kStopsJsonHelp =
    "Print one JSON object {\"changed\": bool, \"stops\": [{\"effectId\", \"at\"}]} (the stops "
    "after the change; effectId \"*\" is --all)";

std::string effectName(std::string_view effectId) {
  return effectId == kAllEffects ? "every effect (--all)" : "'" + std::string(effectId) + "'";
}

void printStops(std::ostream& out, const std::vector<KillSwitchEntry>& stops) {
  if (stops.empty()) {
    out << "no effect is stopped\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"EFFECT", "STOPPED AT"}};
  for (const auto& s : stops) {
    rows.push_back(
        {s.effectId == kAllEffects ? "* (every effect)" : s.effectId, formatTimestamp(s.atMillis)});
  }
  out << alignedTable(rows);
}

const KillSwitchEntry* findStop(const std::vector<KillSwitchEntry>& stops, std::string_view id) {
  for (const auto& s : stops) {
    if (s.effectId == id) return &s;
  }
  return nullptr;
}

struct KillArgs {
  std::string effectId;
  bool all = false;
  bool list = false;
  bool json = false;
  bool force = false;
};

// True when a workflow this program registers uses effect `id`, or a run in this home
// recorded a step of it (an agent app's tool or model). Newest runs first; stops at the first.
bool effectIsKnown(HomeSession& session, const std::string& id) {
  if (session.tasks().find(id) != nullptr) return true;
  const kernel::EventStore& store = session.store(false);
  std::vector<kernel::ExecutionInfo> runs = store.list({});
  for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
    bool found = false;
    try {
      store.scan(run->id, 1, [&](const kernel::Event& e) {
        if (found || (e.type != kernel::EventType::kStepCompleted &&
                      e.type != kernel::EventType::kStepFailed)) {
          return;
        }
        const auto* effect = e.data.if_contains("effectId");
        found = effect != nullptr && effect->is_string() && effect->get_string() == id;
      });
    } catch (const kernel::SealedEventError&) {
      continue;  // sealed, no keys here: it proves nothing either way (--force stops it anyway)
    } catch (const DataLossError&) {
      continue;  // a damaged log proves nothing either way; `loom log` reports it
    }
    if (found) return true;
  }
  return false;
}

// Exactly one of EFFECT_ID, --all (and, for kill, --list) must be given.
void requireOneTarget(const KillArgs& args, std::string_view command, bool listAllowed) {
  int given = (args.effectId.empty() ? 0 : 1) + (args.all ? 1 : 0) + (args.list ? 1 : 0);
  if (given == 1) return;
  throw UsageError("`loom " + std::string(command) + "` takes one of EFFECT_ID, --all" +
                   (listAllowed ? ", --list" : "") + "; see `loom " + std::string(command) +
                   " --help`");
}

std::shared_ptr<KillArgs> addTargetArgs(CLI::App& command, std::string_view effectHelp,
                                        std::string_view allHelp) {
  auto args = std::make_shared<KillArgs>();
  command.add_option("EFFECT_ID", args->effectId, std::string(effectHelp))->type_name("");
  command.add_flag("--all", args->all, std::string(allHelp));
  command.add_flag("--json", args->json, std::string(kStopsJsonHelp));
  return args;
}

int listStops(HomeSession& session, bool asJson) {
  auto stops = session.killSwitch().list();
  if (asJson) {
    session.out() << json::toText(inspect::stopsJson(stops, std::nullopt)) << std::endl;
  } else {
    printStops(session.out(), stops);
    session.out().flush();
  }
  return kExitOk;
}

}  // namespace

Action setupKill(CLI::App& command, HomeSession& session) {
  auto args = addTargetArgs(command,
                            "The effect id to stop: a task's id (`example.step`), an agent "
                            "tool's name or a model's id (`scripted`)",
                            "Stop every effect, whatever its id");
  command.add_flag("--list", args->list, "List the stops instead (as `loom killed`)");
  command.add_flag("--force", args->force,
                   "Record the stop of an effect id that no registered workflow uses and no run "
                   "in this home recorded (one a run will reach later)");
  command.footer(
      "A stopped effect does not run: running loom processes using this home see the stop\n"
      "within a second, record the step as failed (retryable) and park the run (reason\n"
      "effectStopped); new runs park at their first step of that effect. Nothing recorded is\n"
      "lost. To continue: `loom unkill EFFECT_ID`, then `loom resume ID` for each parked run\n"
      "(`loom ls` shows them).");
  return [&session, args] {
    requireOneTarget(*args, "kill", true);
    if (args->list) return listStops(session, args->json);
    middleware::KillSwitchStore& store = session.killSwitch();
    std::string id = args->all ? std::string(kAllEffects) : args->effectId;
    bool changed = findStop(store.list(), id) == nullptr;
    if (!args->all && changed && !args->force && !effectIsKnown(session, id)) {
      throw UsageError("no workflow this program registers uses effect '" + id +
                       "' and no run in this home recorded a step of it, so nothing was "
                       "stopped; check the spelling (`loom log <run>` shows each step's "
                       "effectId; an agent app's effect ids are its [[tools]] names and its "
                       "model's id, `scripted` or `openai:<model>`), or pass --force to stop it "
                       "before any run reaches it");
    }
    if (args->all) {
      store.killAll();
    } else {
      store.kill(id);
    }
    auto stops = store.list();
    if (args->json) {
      session.out() << json::toText(inspect::stopsJson(stops, changed)) << std::endl;
      return kExitOk;
    }
    const KillSwitchEntry* stop = findStop(stops, id);
    std::string since = stop ? formatTimestamp(stop->atMillis) : "now";
    session.out() << (changed ? "stopped " + effectName(id)
                              : effectName(id) + " was already stopped (since " + since + ")")
                  << "\nrunning loom processes using this home see it within a second; their "
                     "runs park before the next step of it\n"
                  << "next: loom unkill " << (args->all ? "--all" : id)
                  << ", then loom resume <id> for each parked run (see loom ls)" << std::endl;
    return kExitOk;
  };
}

Action setupUnkill(CLI::App& command, HomeSession& session) {
  auto args = addTargetArgs(command, "The effect id whose stop to lift",
                            "Lift every stop (the --all one and each named one)");
  command.footer(
      "Lifting a stop does not restart anything: runs parked by it (reason effectStopped)\n"
      "wait until `loom resume ID`, which runs the stopped step again. A named unkill does\n"
      "not lift `loom kill --all`.");
  return [&session, args] {
    requireOneTarget(*args, "unkill", false);
    middleware::KillSwitchStore& store = session.killSwitch();
    std::string message;
    bool changed = false;
    if (args->all) {
      int lifted = store.unkillAll();
      changed = lifted > 0;
      message = changed ? "lifted " + std::to_string(lifted) + " stop(s)" : "no effect was stopped";
    } else {
      changed = store.unkill(args->effectId);
      message = changed ? "lifted the stop of " + effectName(args->effectId)
                        : effectName(args->effectId) + " was not stopped by name; nothing changed";
    }
    auto stops = store.list();
    if (args->json) {
      session.out() << json::toText(inspect::stopsJson(stops, changed)) << std::endl;
      return kExitOk;
    }
    session.out() << message << "\n";
    if (findStop(stops, kAllEffects) != nullptr) {
      session.out() << "note: every effect is still stopped by `loom kill --all`; lift it with "
                       "`loom unkill --all`\n";
    } else if (changed) {
      session.out() << "next: loom resume <id> for each run it parked (see loom ls: status "
                       "parked)\n";
    }
    session.out().flush();
    return kExitOk;
  };
}

Action setupKilled(CLI::App& command, HomeSession& session) {
  auto asJson = std::make_shared<bool>(false);
  command.add_flag("--json", *asJson,
                   "Print one JSON object {\"stops\": [{\"effectId\", \"at\"}]} (effectId \"*\" "
                   "is --all)");
  command.footer("Lift a stop with `loom unkill EFFECT_ID` (or `loom unkill --all`).");
  return [&session, asJson] { return listStops(session, *asJson); };
}

}  // namespace loom::cli
