// The subcommands that read the home's event store without running anything: ls, log, state.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
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
#include "inspect/usage_text.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/retention.h"
#include "loom/util/clock.h"
#include "text.h"

namespace loom::cli {
namespace {


// The execution's metadata; a NotFoundError that says how to find the right id otherwise.
kernel::ExecutionInfo requireExecution(HomeSession& session, const std::string& id) {
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


// nullopt for a live run; else its archived copy (ADR 0138: retention moved its log into an
// archive segment), its events unsealed as live ones are (erased subjects read as erased).
// NotFoundError when neither holds it (after checking that no journaled segment is missing).
std::optional<sweep::ArchivedExecution> archivedUnlessLive(HomeSession& session,
                                                           const std::string& id) {
  if (session.store(false).info(id)) return std::nullopt;
  sweep::Archive archive =
      sweep::readableArchive(app::openArchiveStore(session.location()), session.store(false));
  std::optional<sweep::ArchivedExecution> archived = archive.find(id);
  if (!archived) {
    sweep::requireJournaledSegments(session.store(false), archive);  // not gone: missing
    requireExecution(session, id);  // throws: neither live nor archived
    return std::nullopt;
  }
  for (auto& e : archived->events) e = session.openArchived(id, e);
  return archived;
}

std::shared_ptr<IdArgs> addIdArgs(CLI::App& command, HomeSession& session, std::string_view jsonHelp) {
  auto args = std::make_shared<IdArgs>();
  command.add_option("ID", args->id, "The execution's id (see `loom ls`)")
      ->required()
      ->type_name("");
  command.add_flag("--json", args->json, std::string(jsonHelp));
  addConfigOption(command, session);
  return args;
}

}  // namespace

// --config FILE: read through the app that file configures (sealed logs are unsealed with
// its security.keys; erased subjects read as erased).
void addConfigOption(CLI::App& command, HomeSession& session) {
  command
      .add_option_function<std::string>(
          "--config", [&session](const std::string& file) { session.loadConfig(file); },
          "A loom.toml with security.keys: sealed logs (compliance.erase, security.crypto) "
          "are shown decrypted")
      ->type_name("FILE");
}

namespace {

constexpr std::string_view kStatuses[] = {"running",  "orphaned",  "submitted", "parked",
                                          "retrying", "completed", "failed",    "cancelled",
                                          "erased",   "archived"};

// Due work a worker polling every 500 ms (the default) would have taken by now.
constexpr int64_t kDueGraceMillis = 2'000;

struct LsArgs {
  bool json = false;
  std::string status;
  std::string workflow;
  std::string subject;
};

// `text` cut to at most `width` bytes, ending in "~" when cut: a table cell that fits.
std::string fit(const std::string& text, std::size_t width) {
  return text.size() <= width ? text : truncateUtf8(text, width - 1, "~");
}


// One row of `loom ls`, each cell cut so that a row fits 120 columns.
std::vector<std::string> lsRow(const inspect::RunStatus& run, int64_t now) {
  const kernel::ExecutionInfo& info = run.info;
  std::string sizes = inspect::shortNumber(info.logBytes) + "/" +
                      (run.erased ? std::string("-") : inspect::shortNumber(info.stateBytes));
  int64_t time = info.endedAtMillis.value_or(info.startedAtMillis);
  return {info.id,
          fit(info.workflow, 16),
          fit(inspect::statusText(run, now), 29),
          fit(info.subject.value_or("-"), 8),
          run.erased ? "-" : std::to_string(info.steps),
          sizes,
          fit(run.erased ? std::string("-") : inspect::shortUsage(info.usage), 11),
          run.unserved ? fit(*info.codeVersion, 11) + "*" : fit(info.codeVersion.value_or("-"), 12),
          inspect::shortTime(time, now)};
}

bool matches(const kernel::ExecutionInfo& info, const kernel::ExecutionFilter& filter) {
  return (!filter.workflow || info.workflow == *filter.workflow) &&
         (!filter.subject || info.subject == filter.subject);
}

// The runs retention archived whose live log is gone (the newest copy of each), by id. A
// segment that cannot be read is named on stderr, not skipped silently: its runs are missing
// from the list.
std::vector<inspect::RunStatus> archivedRuns(HomeSession& session,
                                             const kernel::ExecutionFilter& filter,
                                             const inspect::ShredTimes& shreds) {
  const kernel::EventStore& store = session.store(false);
  sweep::Archive archive = sweep::readableArchive(app::openArchiveStore(session.location()), store);
  try {
    sweep::requireJournaledSegments(store, archive);
  } catch (const Error& e) {
    std::cerr << "loom: " << e.what() << "; the runs it holds are missing from this list"
              << std::endl;
  }
  std::map<std::string, kernel::ExecutionInfo> newest;
  for (const auto& name : archive.segmentNames()) {
    try {
      for (auto& info : archive.openSegment(name).listExecutions()) {
        if (matches(info, filter) && !store.info(info.id)) newest[info.id] = std::move(info);
      }
    } catch (const Error& e) {
      std::cerr << "loom: cannot list archive segment " << name << " (" << e.what()
                << "); the runs it holds are missing from this list" << std::endl;
    }
  }
  std::vector<inspect::RunStatus> runs;
  for (auto& [id, info] : newest) {
    bool erased = inspect::isErased(info, shreds);
    runs.push_back(inspect::RunStatus{.info = std::move(info), .erased = erased, .archived = true});
  }
  return runs;
}

}  // namespace

Action setupLs(CLI::App& command, HomeSession& session) {
  auto args = std::make_shared<LsArgs>();
  command.add_flag("--json", args->json,
                   "Print one JSON array of {\"id\",\"workflow\",\"status\",\"subject\",\"steps\","
                   "\"logBytes\",\"stateBytes\",\"startedAt\",\"endedAt\"} (RFC 3339 times; "
                   "endedAt null while not ended; a run that recorded its code version adds "
                   "\"codeVersion\", one whose model steps reported usage adds \"usage\": "
                   "{\"inputTokens\",\"outputTokens\",\"cachedInputTokens\",\"tokens\","
                   "\"costUsd\",\"modelTurns\"}, and \"unserved\": true when live workers left it to a "
                   "worker of that version and none runs it; an erased run adds \"erased\": true, with "
                   "steps and stateBytes null; a run whose log retention archived adds "
                   "\"archived\": true). status is running, orphaned (nobody runs it: "
                   "resume it), submitted (`loom run --submit`, not run yet), parked, completed, "
                   "retrying (a step waits for its next attempt), cancelled or failed; a "
                   "running or orphaned run, and a parked one a live process holds, adds "
                   "\"owner\": {\"host\",\"pid\",\"heartbeatAt\",\"heartbeatAgeMs\","
                   "\"leaseExpiresAt\"} (null when no lease was ever taken); a parked or "
                   "retrying run adds \"parkReason\", \"waitingFor\" (the signal it awaits), and "
                   "\"wakeAt\" (a durable timer, an approval deadline) or \"nextAttemptAt\" and "
                   "\"lastError\" (retrying)");
  std::string statuses;
  for (std::string_view st : kStatuses)
    statuses += (statuses.empty() ? "" : ", ") + std::string(st);
  command.add_option("--status", args->status, "Only runs with this status: " + statuses)
      ->type_name("STATUS")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kStatuses), std::end(kStatuses))));
  command.add_option("--workflow", args->workflow, "Only runs of this workflow (or agent)")
      ->type_name("NAME");
  command.add_option("--subject", args->subject, "Only runs of this data subject")->type_name("S");
  command.footer(
      "STATUS says why a parked run waits (a signal, an approval with its deadline, a timer,\n"
      "a retry's next attempt) and which process holds a running run (--json: its heartbeat).\n"
      "SIZE is log/state bytes (k = 1000). USAGE is the model tokens the run's steps recorded\n"
      "and their cost at observability.prices (`loom usage` adds them up). VERSION is the code version the run started on\n"
      "(`loom state ID` shows it whole; a worker runs only runs of its own code: docs/\n"
      "operations.md, \"Deploying new code\"); VERSION* marks a run whose version live workers\n"
      "left to a worker of their own and none of them runs. TIME is when the run ended, or started while it\n"
      "has not; times are UTC, hh:mm:ss today, else MM-DD hh:mm:ss. Long cells end in ~.\n"
      "Runs whose logs `loom retention run` archived are listed too, marked (archived);\n"
      "`loom log` and `loom state` read them from the archive.\n"
      "A run is orphaned when its process died (its lease expired, or its pid is gone on this\n"
      "host): `loom resume ID` continues it. Timers, approval deadlines and retries fire only\n"
      "while a worker runs (`loom worker`); `loom ls` notes due work nobody has taken. A\n"
      "retrying run: `loom worker` runs it at its next attempt, `loom retry ID` now, `loom\n"
      "cancel ID` gives up.");
  addConfigOption(command, session);
  return [&session, args] {
    kernel::EventStore& store = session.store(false);
    kernel::ExecutionFilter filter;
    if (!args->workflow.empty()) filter.workflow = args->workflow;
    if (!args->subject.empty()) filter.subject = args->subject;
    auto infos = store.list(filter);
    auto shreds = compliance::detail::shredTimes(store);
    std::vector<inspect::RunStatus> runs;
    auto keep = [&](inspect::RunStatus&& run) {
      std::string status = run.erased ? std::string("erased") : run.status();
      if (args->status.empty() || status == args->status ||
          (run.archived && args->status == "archived")) {
        runs.push_back(std::move(run));
      }
    };
    for (const auto& info : infos) keep(inspect::runStatusOf(store, info, shreds));
    for (auto& run : archivedRuns(session, filter, shreds)) keep(std::move(run));
    std::size_t unserved = 0;
    try {
      unserved = inspect::markUnserved(store, runs);
    } catch (const Error& e) {
      std::cerr << "loom: cannot read the workers' presence (" << e.what()
                << "); runs that no worker of their code version serves are not marked"
                << std::endl;
    }
    if (args->json) {
      json::array all;
      for (const auto& run : runs) all.push_back(inspect::toJson(run));
      session.out() << json::toText(all) << std::endl;
      return kExitOk;
    }
    if (runs.empty()) {
      bool filtered = !args->status.empty() || filter.workflow || filter.subject;
      session.out() << "no executions" << (filtered ? " match" : "") << " in "
                    << session.location().describe() << "; "
                    << (filtered ? "drop a filter to see more"
                                 : "start one with `loom run <workflow>`")
                    << std::endl;
      return kExitOk;
    }
    std::vector<std::vector<std::string>> rows = {
        {"ID", "WORKFLOW", "STATUS", "SUBJECT", "STEPS", "SIZE", "USAGE", "VERSION", "TIME"}};
    int64_t now = systemClock()->nowMillis();
    std::size_t due = 0;
    for (const auto& run : runs) {
      rows.push_back(lsRow(run, now));
      if (inspect::dueAndUnowned(run, now, kDueGraceMillis)) ++due;
    }
    session.out() << alignedTable(rows) << std::flush;
    if (due > 0) {
      std::cerr << "note: " << due << (due == 1 ? " run is" : " runs are")
                << " due (a timer, an approval deadline or a retry) and no process has taken "
                   "it: due work runs only while a worker runs (`loom worker`), or with `loom "
                   "resume ID`"
                << std::endl;
    }
    if (unserved > 0) {
      std::cerr << "note: " << unserved << (unserved == 1 ? " run" : " runs")
                << " (VERSION*) of a code version that live workers left and none runs: start "
                   "a worker of that code, or move them to the code at hand (`loom upgrade ID "
                   "--to-current`; docs/operations.md, \"Deploying new code\")"
                << std::endl;
    }
    return kExitOk;
  };
}

Action setupLog(CLI::App& command, HomeSession& session) {
  auto args = addIdArgs(command, session,
                        "Print one JSON array of the stored event objects "
                        "{\"seq\",\"type\",\"at\",...}, complete");
  command.footer("Text output shows one event per line: seq, time, type and its data\n(cut to " +
                 std::to_string(kMaxEventDataBytes) +
                 " bytes; --json shows everything). A log that `loom retention run` archived\n"
                 "is read from its archive segment (in <home>/archive, or on the PostgreSQL "
                 "server).");
  return [&session, args] {
    std::optional<sweep::ArchivedExecution> archived = archivedUnlessLive(session, args->id);
    std::ostream& out = session.out();
    bool first = true;
    // --json prints one value or, when a row cannot be read, only the error: the array is
    // written once whole (the log's text in memory), never a half array before an error.
    std::string array = args->json ? "[" : "";
    auto print = [&](const kernel::Event& event) {
      if (args->json) {
        array += first ? "" : ",";
        array += kernel::toText(event);
      } else {
        out << eventLine(event) << '\n';
      }
      first = false;
    };
    if (archived) {
      for (const auto& e : archived->events) print(e);
    } else {
      session.store(false).scan(args->id, 1, print);
    }
    if (args->json) out << array << ']' << '\n';
    if (archived && !args->json)
      out << "(from the archive: retention moved this log out of the live store)\n";
    out.flush();
    return kExitOk;
  };
}

Action setupState(CLI::App& command, HomeSession& session) {
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
      "kernel's sizes. Either adds \"codeVersion\": the code the run goes on on (its start's,\n"
      "or `loom upgrade`'s; docs/operations.md, \"Deploying new code\"), and \"usage\": the\n"
      "tokens and cost its model steps recorded (docs/observability.md). Without --json the same\n"
      "JSON is printed indented, so stdout is always JSON.");
  return [&session, args, kernelState] {
    std::optional<sweep::ArchivedExecution> archived = archivedUnlessLive(session, args->id);
    inspect::FoldedRun run = archived
                                 ? inspect::foldRun(archived->events, *kernelState)
                                 : inspect::foldRun(session.store(false), args->id, *kernelState);
    json::value state = inspect::toJson(std::move(run), args->id);
    if (archived && state.is_object()) state.as_object()["archived"] = true;
    // Always JSON on stdout: one compact line with --json, indented without it.
    writeJson(session.out(), state, !args->json);
    session.out() << std::endl;
    return kExitOk;
  };
}

}  // namespace loom::cli
