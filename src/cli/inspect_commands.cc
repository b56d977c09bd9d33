// The subcommands that read the home's event store without running anything: ls, log, state.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "command.h"
#include "compliance/erase_journal.h"
#include "compliance/event_sealing.h"
#include "inspect/run_state.h"
#include "inspect/run_status.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/retention.h"
#include "loom/util/clock.h"
#include "text.h"

namespace loom::cli {
namespace {

// Longest event type name ("EXECUTION_COMPLETED"), so the data column lines up.
constexpr std::size_t kTypeWidth = 19;
// Human `loom log` shows at most this much of an event's data; --json shows all of it.
constexpr std::size_t kMaxDataBytes = 240;

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
      for (const auto& info : infos) all.push_back(inspect::toJson(inspect::runStatusOf(store, info, shreds)));
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
      inspect::RunStatus run = inspect::runStatusOf(store, info, shreds);
      const auto& park = run.park;
      rows.push_back({info.id, info.workflow, run.erased ? std::string("erased") : run.status(),
                      info.subject.value_or("-"), run.erased ? "-" : std::to_string(info.steps),
                      std::to_string(info.logBytes),
                      run.erased ? "-" : std::to_string(info.stateBytes),
                      formatTimestamp(info.startedAtMillis),
                      info.endedAtMillis ? formatTimestamp(*info.endedAtMillis) : "-",
                      park && park->awaitsRetry() && park->wakeAtMillis
                          ? "next attempt " + formatTimestamp(*park->wakeAtMillis)
                          : inspect::ownerText(run.live)});
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
                 "is read from its archive segment (in <home>/archive, or on the PostgreSQL "
                 "server).");
  return [&session, args] {
    // A live log, or else one that retention moved into an archive segment (ADR 0138).
    std::optional<sweep::ArchivedExecution> archived;
    if (!session.store(false).info(args->id)) {
      sweep::Archive archive(app::openArchiveStore(session.location()));
      archived = archive.find(args->id);
      if (!archived) {
        sweep::requireJournaledSegments(session.store(false), archive);  // not gone: missing
        requireExecution(session, args->id);
      }
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
      // Retention archived the stored (possibly sealed) events: unsealed as live ones are
      // (erased subjects read as erased).
      for (const auto& e : archived->events) print(session.openArchived(args->id, e));
    } else {
      session.store(false).scan(args->id, 1, print);
    }
    if (args->json) out << ']' << '\n';
    if (archived && !args->json)
      out << "(from the archive: retention moved this log out of the live store)\n";
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
    inspect::FoldedRun run = inspect::foldRun(session.store(false), args->id, *kernelState);
    if (args->json || run.kernelState) {
      writeJson(session.out(), inspect::toJson(std::move(run), args->id), !args->json);
      session.out() << std::endl;
      return kExitOk;
    }
    for (auto& [loop, state] : run.loops) {
      session.out() << "agent loop \"" << loop << "\": folded state " << json::textBytes(state)
                    << " bytes (what a resume reads)\n";
      writeJson(session.out(), state, true);
      session.out() << "\n";
    }
    session.out().flush();
    return kExitOk;
  };
}

}  // namespace loom::cli
