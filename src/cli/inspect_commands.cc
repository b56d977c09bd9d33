// The subcommands that read the home's event store without running anything: ls, log, state.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "command.h"
#include "compliance/erase_journal.h"
#include "compliance/event_sealing.h"
#include "loom/agent/agent_state.h"
#include "loom/kernel/fold.h"
#include "loom/sweep/archive.h"
#include "loom/util/clock.h"
#include "text.h"

namespace loom::cli {
namespace {

// Longest event type name ("EXECUTION_COMPLETED"), so the data column lines up.
constexpr std::size_t kTypeWidth = 19;
// Human `loom log` shows at most this much of an event's data; --json shows all of it.
constexpr std::size_t kMaxDataBytes = 240;

json::value timestampOrNull(const std::optional<int64_t>& millis) {
  return millis ? json::value(formatTimestamp(*millis)) : json::value(nullptr);
}

// Who runs an execution whose status is running, as `loom ls` shows it: its lease holder
// while that one is alive, orphaned (safe to resume) otherwise.
struct Liveness {
  bool orphaned = false;
  std::optional<kernel::Lease> lease;  // the last holder, if any
  int64_t nowMillis = 0;
};

std::optional<Liveness> livenessOf(const kernel::EventStore& store,
                                   const kernel::ExecutionInfo& info) {
  if (info.status != kernel::ExecutionStatus::kRunning) return std::nullopt;
  Liveness l;
  l.lease = store.currentLease(info.id);
  l.nowMillis = systemClock()->nowMillis();
  l.orphaned = kernel::isOrphaned(l.lease, l.nowMillis);
  return l;
}

// Why a parked run waits, when its last event can be read here (a sealed one without keys
// cannot: ls shows the metadata only).
std::optional<kernel::ParkState> parkIfReadable(const kernel::EventStore& store,
                                                const kernel::ExecutionInfo& info) {
  try {
    return kernel::currentPark(store, info);
  } catch (const kernel::SealedEventError&) {
    return std::nullopt;
  }
}

std::string statusText(const kernel::ExecutionInfo& info, const std::optional<Liveness>& live,
                       const std::optional<kernel::ParkState>& park) {
  // Recorded by `loom run --submit` and never run yet: only its EXECUTION_STARTED, no lease.
  if (live && !live->lease && info.nextSeq == 2) return "submitted";
  if (live && live->orphaned) return "orphaned";
  if (park && park->awaitsRetry()) return "retrying";
  return std::string(kernel::statusName(info.status));
}

json::value ownerJson(const std::optional<Liveness>& live) {
  if (!live || !live->lease) return nullptr;
  const kernel::Lease& lease = *live->lease;
  return json::object{{"host", lease.owner.host},
                      {"pid", lease.owner.pid},
                      {"heartbeatAt", formatTimestamp(lease.renewedAtMillis)},
                      {"heartbeatAgeMs", live->nowMillis - lease.renewedAtMillis},
                      {"leaseExpiresAt", formatTimestamp(lease.expiresAtMillis)}};
}

std::string ownerText(const std::optional<Liveness>& live) {
  if (!live || !live->lease) return "-";
  const kernel::Lease& lease = *live->lease;
  char age[32];
  std::snprintf(age, sizeof age, "%.1f s",
                static_cast<double>(live->nowMillis - lease.renewedAtMillis) / 1000.0);
  return (live->orphaned ? "was pid " : "pid ") + std::to_string(lease.owner.pid) + "@" +
         lease.owner.host + ", beat " + age + " ago";
}

json::object infoJson(const kernel::ExecutionInfo& info, bool erased = false,
                      const std::optional<Liveness>& live = std::nullopt,
                      const std::optional<kernel::ParkState>& park = std::nullopt) {
  json::object o{
      {"id", info.id},
      {"workflow", info.workflow},
      {"status", statusText(info, live, park)},
      {"subject", info.subject ? json::value(*info.subject) : json::value(nullptr)},
      {"steps", erased ? json::value(nullptr) : json::value(info.steps)},
      {"logBytes", info.logBytes},
      {"stateBytes", erased ? json::value(nullptr) : json::value(info.stateBytes)},
      {"startedAt", formatTimestamp(info.startedAtMillis)},
      {"endedAt", timestampOrNull(info.endedAtMillis)},
  };
  if (erased) o["erased"] = true;
  if (live) o["owner"] = ownerJson(live);
  if (park) {
    o["parkReason"] = park->reason;
    if (park->awaitsRetry()) {
      if (park->wakeAtMillis) o["nextAttemptAt"] = formatTimestamp(*park->wakeAtMillis);
      o["lastError"] = park->detail;
    } else if (park->wakeAtMillis) {
      o["wakeAt"] = formatTimestamp(*park->wakeAtMillis);
    }
  }
  return o;
}

bool isErased(const kernel::ExecutionInfo& info,
              const std::map<std::string, int64_t, std::less<>>& shreds) {
  if (!info.subject) return false;
  auto it = shreds.find(*info.subject);
  return it != shreds.end() && info.startedAtMillis <= it->second;
}

// The execution's metadata; a NotFoundError that says how to find the right id otherwise.
kernel::ExecutionInfo requireExecution(Session& session, const std::string& id) {
  auto info = session.store(false).info(id);
  if (!info) {
    throw NotFoundError("no execution '" + id + "' in " + session.location().describe() +
                        "; list the executions with `loom ls`");
  }
  return *info;
}

struct IdArgs {
  std::string id;
  bool json = false;
};

// --config FILE: read through the app that file configures (sealed logs are unsealed with
// its security.keys; erased subjects read as erased).
void addConfigOption(CLI::App& command, Session& session) {
  command
      .add_option_function<std::string>(
          "--config", [&session](const std::string& file) { session.loadConfig(file); },
          "A loom.toml with security.keys: sealed logs (compliance.erase, security.crypto) "
          "are shown decrypted")
      ->type_name("FILE");
}

std::shared_ptr<IdArgs> addIdArgs(CLI::App& command, Session& session, std::string_view jsonHelp) {
  auto args = std::make_shared<IdArgs>();
  command.add_option("ID", args->id, "The execution's id (see `loom ls`)")
      ->required()
      ->type_name("");
  command.add_flag("--json", args->json, std::string(jsonHelp));
  addConfigOption(command, session);
  return args;
}

}  // namespace

Action setupLs(CLI::App& command, Session& session) {
  auto asJson = std::make_shared<bool>(false);
  command.add_flag("--json", *asJson,
                   "Print one JSON array of {\"id\",\"workflow\",\"status\",\"subject\",\"steps\","
                   "\"logBytes\",\"stateBytes\",\"startedAt\",\"endedAt\"} (RFC 3339 times; "
                   "endedAt null while not ended; an erased run adds \"erased\": true, with "
                   "steps and stateBytes null). status is running, orphaned (nobody runs it: "
                   "resume it), submitted (`loom run --submit`, not run yet), parked, completed, "
                   "retrying (a step waits for its next attempt), cancelled or failed; a "
                   "running or orphaned run adds "
                   "\"owner\": {\"host\",\"pid\",\"heartbeatAt\",\"heartbeatAgeMs\","
                   "\"leaseExpiresAt\"} (null when no lease was ever taken); a parked or "
                   "retrying run adds \"parkReason\", and \"wakeAt\" (a durable timer, an "
                   "approval deadline) or \"nextAttemptAt\" and \"lastError\" (retrying)");
  command.footer(
      "A run is orphaned when its process died (its lease expired, or its pid is gone on this\n"
      "host): `loom resume ID` continues it. A running run's OWNER is the process holding its\n"
      "lease and how long ago it last renewed it. A retrying run shows when its next attempt\n"
      "is due: `loom worker` runs it then, `loom retry ID` now, `loom cancel ID` gives up.");
  addConfigOption(command, session);
  return [&session, asJson] {
    kernel::EventStore& store = session.store(false);
    auto infos = store.list(kernel::ExecutionFilter{});
    auto shreds = compliance::detail::shredTimes(store);
    if (*asJson) {
      json::array all;
      for (const auto& info : infos) {
        bool erased = isErased(info, shreds);
        auto park = erased ? std::nullopt : parkIfReadable(store, info);
        all.push_back(infoJson(info, erased, livenessOf(store, info), park));
      }
      session.out() << json::toText(all) << std::endl;
      return kExitOk;
    }
    if (infos.empty()) {
      session.out() << "no executions in " << session.location().describe()
                    << "; start one with `loom run <workflow>`" << std::endl;
      return kExitOk;
    }
    std::vector<std::vector<std::string>> rows = {{"ID", "WORKFLOW", "STATUS", "SUBJECT", "STEPS",
                                                   "LOG BYTES", "STATE BYTES", "STARTED", "ENDED",
                                                   "OWNER"}};
    for (const auto& info : infos) {
      bool erased = isErased(info, shreds);
      auto live = livenessOf(store, info);
      auto park = erased ? std::nullopt : parkIfReadable(store, info);
      rows.push_back({info.id, info.workflow,
                      erased ? std::string("erased") : statusText(info, live, park),
                      info.subject.value_or("-"), erased ? "-" : std::to_string(info.steps),
                      std::to_string(info.logBytes), erased ? "-" : std::to_string(info.stateBytes),
                      formatTimestamp(info.startedAtMillis),
                      info.endedAtMillis ? formatTimestamp(*info.endedAtMillis) : "-",
                      park && park->awaitsRetry() && park->wakeAtMillis
                          ? "next attempt " + formatTimestamp(*park->wakeAtMillis)
                          : ownerText(live)});
    }
    session.out() << alignedTable(rows) << std::flush;
    return kExitOk;
  };
}

Action setupLog(CLI::App& command, Session& session) {
  auto args = addIdArgs(command, session,
                        "Print one JSON array of the stored event objects "
                        "{\"seq\",\"type\",\"at\",...}, complete");
  command.footer("Text output shows one event per line: seq, time, type and its data\n(cut to " +
                 std::to_string(kMaxDataBytes) +
                 " bytes; --json shows everything). A log that `loom retention run` archived\n"
                 "is read from its archive segment in <home>/archive.");
  return [&session, args] {
    // A live log, or else one that retention moved into an archive segment (ADR 0138).
    std::optional<sweep::ArchivedExecution> archived;
    if (!session.store(false).info(args->id)) {
      archived = sweep::Archive(session.location().home / "archive").find(args->id);
      if (!archived) requireExecution(session, args->id);
    }
    std::ostream& out = session.out();
    bool first = true;
    if (args->json) out << '[';
    auto print = [&](const kernel::Event& event) {
      if (args->json) {
        out << (first ? "" : ",") << kernel::toText(event);
      } else {
        std::string type(kernel::eventTypeName(event.type));
        type.resize(std::max(type.size(), kTypeWidth), ' ');
        out << event.seq << "  " << formatTimestamp(event.atMillis) << "  " << type << "  "
            << truncateUtf8(json::toText(event.data), kMaxDataBytes, " ...") << '\n';
      }
      first = false;
    };
    if (archived) {
      // Retention archived the stored (possibly sealed) events: unseal them with the home's
      // keys when a config with security.keys was given (erased subjects read as erased).
      std::optional<compliance::EventUnsealer> unsealer;
      if (session.hasConfig()) {
        if (auto* keys = session.app(false).keys()) unsealer.emplace(*keys);
      }
      for (const auto& e : archived->events) print(unsealer ? unsealer->unseal(args->id, e) : e);
    } else {
      session.store(false).scan(args->id, 1, print);
    }
    if (args->json) out << ']' << '\n';
    if (archived && !args->json)
      out << "(from the archive: retention moved this log out of loom.db)\n";
    out.flush();
    return kExitOk;
  };
}

Action setupState(CLI::App& command, Session& session) {
  auto args = addIdArgs(command, session,
                        "Print one line of compact JSON: the kernel's folded state, or for an "
                        "agent run {\"id\", \"loops\": [{\"loop\", \"stateBytes\", \"state\"}]}");
  auto kernelState = std::make_shared<bool>(false);
  command.add_flag("--kernel", *kernelState,
                   "For an agent run, print the kernel's folded state instead of the agent's");
  command.footer(
      "The folded state is what a resume reads: {\"workflow\",\"subject\",\"status\",\"input\","
      "\n\"steps\": {stepId: output}, \"signals\": [{\"name\",\"payload\"}], \"result\"}.\n"
      "For an agent run (its steps are <loop>#turn:<i>:...), each agent loop's folded state\n"
      "instead, with its size in bytes: {\"loop\", \"frames\", \"turnOutputs\", \"_decisions\",\n"
      "\"transcriptBytes\", \"sawTaintFrom\"} (docs/spec/agent-state.md). `loom ls` shows the\n"
      "kernel's sizes.");
  return [&session, args, kernelState] {
    requireExecution(session, args->id);
    // One streamed pass over the log (never all of it in memory): each agent loop's state is
    // folded from its first step on; the kernel's fold is kept only while no agent step has
    // appeared (or with --kernel).
    std::optional<kernel::Fold> fold(std::in_place);
    std::vector<std::pair<std::string, agent::AgentStateFolder>> loops;
    session.store(false).scan(args->id, 1, [&](const kernel::Event& e) {
      if (*kernelState) return fold->apply(e);
      if (auto loop = agent::agentLoopOf(e)) {
        auto known = [&](const auto& l) { return l.first == *loop; };
        if (std::find_if(loops.begin(), loops.end(), known) == loops.end()) {
          loops.emplace_back(*loop, agent::AgentStateFolder(*loop));
        }
        fold.reset();
      }
      if (fold) fold->apply(e);
      for (auto& [name, folder] : loops) folder.apply(e);
    });
    if (fold) {
      json::value state = fold->state();
      writeJson(session.out(), state, !args->json);
      session.out() << std::endl;
      return kExitOk;
    }
    // Built by moves (a json::object passed as a json::value, or put in an initializer list,
    // can be copied: a second copy of every tool result).
    json::value doc = json::object{};
    doc.as_object()["id"] = args->id;
    json::array& folded = doc.as_object()["loops"].emplace_array();
    for (auto& [loop, folder] : loops) {
      json::value state = folder.take();
      int64_t bytes = static_cast<int64_t>(json::textBytes(state));
      if (!args->json) {
        session.out() << "agent loop \"" << loop << "\": folded state " << bytes
                      << " bytes (what a resume reads)\n";
        writeJson(session.out(), state, true);
        session.out() << "\n";
        continue;
      }
      json::object& entry = folded.emplace_back(json::object{}).as_object();
      entry["loop"] = loop;
      entry["stateBytes"] = bytes;
      entry["state"] = std::move(state);
    }
    if (args->json) {
      writeJson(session.out(), doc, false);
      session.out() << "\n";
    }
    session.out().flush();
    return kExitOk;
  };
}

}  // namespace loom::cli
