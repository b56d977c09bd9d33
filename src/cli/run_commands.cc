// The subcommands that run executions: run, resume, signal (of registered workflows and of
// agent apps). Each prints the RunResult as human text or, with --json, as exactly one JSON
// object on stdout.
#include <charconv>
#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>

#include "command.h"
#include "inspect/usage_text.h"
#include "loom/agent/agent_loop.h"
#include "loom/agent/approval.h"
#include "loom/workflow/code_version.h"

namespace loom::cli {
namespace {

using kernel::ExecutionStatus;

constexpr std::string_view kJsonHelp = "Print exactly one JSON object instead of text";

json::object resultJson(const workflow::RunResult& r, bool withCounts,
                        const agent_app::AgentApp* app) {
  json::object o{{"id", r.id}, {"status", kernel::statusName(r.status)}, {"output", r.output}};
  if (r.status == ExecutionStatus::kFailed || r.status == ExecutionStatus::kCancelled) {
    o["error"] = r.error;
  }
  if (r.status == ExecutionStatus::kParked) {
    o["waitingFor"] = r.waitingFor;
    o["parkReason"] = r.parkReason;
    if (!r.parkDetail.empty()) o["parkDetail"] = r.parkDetail;
    if (r.wakeAtMillis) o["wakeAt"] = formatTimestamp(*r.wakeAtMillis);
  }
  if (withCounts) {
    o["replayedSteps"] = r.replayedSteps;
    o["effectsRun"] = r.effectsRun;
  }
  if (app != nullptr) o["modelCalls"] = app->modelCalls();
  return o;
}

// "<code>: <message>" of a recorded error {code, message}; its JSON text if it has another shape.
std::string errorText(const json::value& error) {
  const auto* o = error.if_object();
  const auto* code = o ? o->if_contains("code") : nullptr;
  const auto* message = o ? o->if_contains("message") : nullptr;
  if (code && code->is_string() && message && message->is_string()) {
    return std::string(code->get_string()) + ": " + std::string(message->get_string());
  }
  return json::toText(error);
}

void printParked(std::ostream& out, const workflow::RunResult& r) {
  if (r.parkReason == "approval") {
    out << ", waiting for approval (signal \"" << r.waitingFor << "\")\n";
    out << "next:     loom signal " << r.id << " " << r.waitingFor
        << " '{\"approved\": true}'   (or false to deny it)\n";
    if (r.wakeAtMillis) {
      out << "deadline: " << formatTimestamp(*r.wakeAtMillis)
          << "; it passes only while a worker runs (loom worker), or at loom resume " << r.id
          << " once due\n";
    }
  } else if (r.parkReason == "budgetExceeded") {
    out << " (budgetExceeded: " << r.parkDetail.substr(0, r.parkDetail.find("; raise")) << ")\n";
    out << "next:     loom signal " << r.id << " " << r.waitingFor
        << " '{\"maxTokens\": N}'   (raise a limit: maxTokens, maxCostUsd, maxToolCalls), or "
           "loom cancel "
        << r.id << "\n";
  } else if (!r.waitingFor.empty()) {
    out << ", waiting for signal \"" << r.waitingFor << "\"";
    out << (r.parkReason == "signal" ? "" : " (" + r.parkReason + ")") << "\n";
    out << "next:     loom signal " << r.id << " " << r.waitingFor << " '<JSON payload>'\n";
  } else if (r.parkReason == "timer" && r.wakeAtMillis) {
    out << ", sleeping until " << formatTimestamp(*r.wakeAtMillis) << " (timer)\n";
    out << "next:     the timer fires only while a worker runs: loom worker continues it then "
           "(or loom resume "
        << r.id << " once it is due)\n";
  } else if (r.parkReason == "retrying" && r.wakeAtMillis) {
    out << ", retrying at " << formatTimestamp(*r.wakeAtMillis) << " (" << r.parkDetail << ")\n";
    out << "next:     loom worker runs the next attempt then (or loom retry " << r.id
        << " now; loom cancel " << r.id << " gives up)\n";
  } else if (r.parkReason == "contentStoreUnavailable") {
    out << " (contentStoreUnavailable: " << r.parkDetail << ")\n";
    out << "next:     make room in the content store (or bring it back), then loom retry " << r.id
        << " (a worker tries again at "
        << (r.wakeAtMillis ? formatTimestamp(*r.wakeAtMillis) : std::string("its next poll"))
        << "); only the calls whose results were not stored run again\n";
  } else if (r.parkReason == "effectStopped") {
    out << " (effectStopped: an operator stopped the effect of its next step)\n";
    out << "next:     loom killed lists the stops; loom unkill <effectId>, then loom resume "
        << r.id << "\n";
  } else {
    out << " (" << r.parkReason << ")\n";
    out << "next:     fix the cause, then loom resume " << r.id << "\n";
  }
}

void printHuman(std::ostream& out, const workflow::RunResult& r, bool withCounts,
                const agent_app::AgentApp* app) {
  out << "id:       " << r.id << "\n";
  out << "status:   " << kernel::statusName(r.status);
  switch (r.status) {
    case ExecutionStatus::kCompleted:
      out << "\noutput:   " << json::toText(r.output) << "\n";
      break;
    case ExecutionStatus::kParked:
      printParked(out, r);
      break;
    case ExecutionStatus::kFailed:
      out << "\nerror:    " << errorText(r.error) << "\n";
      break;
    case ExecutionStatus::kCancelled:
      out << "\nreason:   " << json::toText(r.error.at("message")) << "\n";
      break;
    case ExecutionStatus::kRunning:
      out << " (another process runs it now, and sees any signal sent: `loom ls` shows "
             "its owner)\n";
      break;
  }
  if (withCounts) {
    out << "replayed: " << r.replayedSteps << " recorded steps; ran " << r.effectsRun
        << " effects\n";
  }
  if (app != nullptr) {
    out << "model:    answered " << app->modelCalls()
        << " time(s) in this process (recorded turns replay without calling it; failed "
           "attempts are not counted)\n";
  }
}

// Prints `r` and returns the exit code: 1 for a failed run (with its stderr line), else 0.
int report(HomeSession& session, const workflow::RunResult& r, bool asJson, bool withCounts) {
  const agent_app::AgentApp* app = session.agentApp();
  // The run's model usage so far, from its metadata (what its steps recorded, replays not
  // counted again).
  std::optional<kernel::ExecutionInfo> info = session.store(false).info(r.id);
  const kernel::TokenUsage usage = info ? info->usage : kernel::TokenUsage{};
  if (asJson) {
    json::object o = resultJson(r, withCounts, app);
    if (withCounts) o["replayContentStoreCalls"] = session.replayContentStoreCalls();
    if (usage.modelTurns > 0) o["usage"] = kernel::toJson(usage);
    session.out() << json::toText(o) << std::endl;
  } else {
    printHuman(session.out(), r, withCounts, app);
    if (usage.modelTurns > 0) session.out() << "usage:    " << inspect::usageText(usage) << "\n";
    if (withCounts) {
      session.out() << "content:  " << session.replayContentStoreCalls()
                    << " content-store calls while replaying\n";
    }
    session.out().flush();
  }
  if (r.status != ExecutionStatus::kFailed) return kExitOk;
  if (session.options().quietFailures) return kExitFailure;
  // With --json too: the value printed says it, and the stderr line says it to a person.
  printError("execution " + r.id + " failed (" + errorText(r.error) + "); see `loom log " + r.id +
             "` for its events");
  return kExitFailure;
}

std::string workflowList(const workflow::WorkflowRegistry& workflows) {
  std::string list;
  for (const workflow::Workflow* wf : workflows.all()) {
    if (!list.empty()) list += ", ";
    list += wf->name;
  }
  return list.empty() ? "(none)" : list;
}

std::string workflowTable(const workflow::WorkflowRegistry& workflows) {
  std::string text = "Workflows this program registers:\n";
  for (const workflow::Workflow* wf : workflows.all()) {
    text += "  " + wf->name + "\n      " + wf->description + "\n";
  }
  return text;
}

struct RunArgs {
  std::string workflow;
  std::string id;
  std::string subject;
  std::string input = "null";
  std::string prompt;
  std::string config;
  bool json = false;
  bool submit = false;
};

// The prompt of an agent app's run: --prompt, else --input (an object's "prompt", or the
// whole value), else agent.prompt.
json::value agentPrompt(const RunArgs& args, bool inputGiven, bool promptGiven,
                        const agent_app::AgentApp& app) {
  if (inputGiven && promptGiven) {
    throw UsageError("give --prompt TEXT or --input JSON, not both");
  }
  if (promptGiven) return json::value(args.prompt);
  if (inputGiven) {
    json::value input = parseFlagJson(args.input, "--input");
    const auto* o = input.if_object();
    if (o && o->contains(agent_app::kPromptInputKey)) return o->at(agent_app::kPromptInputKey);
    return input;
  }
  if (!app.defaultPrompt.empty()) return json::value(app.defaultPrompt);
  throw UsageError("agent \"" + app.name + "\" (" + app.file.string() +
                   ") has no agent.prompt; pass --prompt TEXT");
}

constexpr std::string_view kRunConfigHelp =
    "A loom.toml whose groups apply to this program's workflows (execution.claimCheck, "
    "security.redact, execution.effectMiddleware retry and timeout, compliance, storage); "
    "recorded in the run, so resume and signal use it again";

CLI::Option* addRunConfigOption(CLI::App& command, std::string& file) {
  return command.add_option("--config", file, std::string(kRunConfigHelp))->type_name("FILE");
}

}  // namespace

Action setupRun(CLI::App& command, HomeSession& session) {
  auto args = std::make_shared<RunArgs>();
  command
      .add_option("WORKFLOW", args->workflow,
                  "The registered workflow to run, or an agent app file (a path ending in .toml)")
      ->required()
      ->type_name("");
  CLI::Option* id =
      command
          .add_option("--id", args->id,
                      "The execution id (default: a fresh one); an existing id is refused, "
                      "continue that execution with `loom resume ID`")
          ->type_name("ID");
  CLI::Option* subject = command
                             .add_option("--subject", args->subject,
                                         "The data subject the execution holds "
                                         "data on (for export and erasure)")
                             ->type_name("S");
  CLI::Option* input =
      command
          .add_option("--input", args->input,
                      "The workflow's input as JSON text (default null); for an agent app, the "
                      "prompt (an object's \"prompt\", or the whole value)")
          ->type_name("JSON");
  CLI::Option* prompt =
      command
          .add_option("--prompt", args->prompt,
                      "An agent app's prompt as plain text (default: the file's agent.prompt)")
          ->type_name("TEXT");
  command.add_flag("--json", args->json,
                   std::string(kJsonHelp) +
                       ": {\"id\",\"status\",\"output\"}, plus \"error\" "
                       "when failed, \"waitingFor\", \"parkReason\" (and \"parkDetail\") when "
                       "parked, \"modelCalls\" for an agent app");
  command.add_flag("--submit", args->submit,
                   "Record the execution and return without running it: `loom worker` runs it "
                   "(or `loom resume ID`); prints {\"id\",\"status\":\"submitted\"} with --json");
  CLI::Option* config = addRunConfigOption(command, args->config);
  command.footer(workflowTable(session.workflows()) + "\n" + std::string(kAgentAppHelp) + "\n\n" +
                 std::string(kDurabilityHelp));
  return [&session, args, id, subject, input, prompt, config] {
    std::string workflow = args->workflow;
    json::value value;
    if (agent_app::isAgentAppPath(workflow) && config->count() > 0) {
      throw UsageError("--config is for this program's workflows; an agent app's file (" +
                       workflow + ") is its config: put the groups in it");
    }
    if (config->count() > 0) session.loadConfig(args->config, true);
    if (agent_app::isAgentAppPath(workflow)) {
      const agent_app::AgentApp& app = session.loadApp(workflow);
      value = agent_app::agentAppInput(
          app, agentPrompt(*args, input->count() > 0, prompt->count() > 0, app));
      workflow = app.name;
    } else {
      if (prompt->count() > 0) {
        throw UsageError("--prompt is for agent apps (a .toml file); pass --input JSON to '" +
                         workflow + "'");
      }
      value = parseFlagJson(args->input, "--input");
      if (session.workflows().find(workflow) == nullptr) {
        throw NotFoundError("no workflow '" + workflow +
                            "' is registered; registered: " + workflowList(session.workflows()) +
                            " (an agent app is a path ending in .toml)");
      }
    }
    if (id->count() > 0) {
      try {
        workflow::validateExecutionId(args->id);
      } catch (const InvalidArgumentError& e) {
        throw UsageError(std::string("--id: ") + e.what());
      }
    }
    workflow::RunOptions options{.id = args->id, .configFile = session.configFile()};
    if (subject->count() > 0) options.subject = args->subject;
    session.setWritesTo("the new run", options.subject);
    if (args->submit) {
      auto result = session.runtime(true).submit(workflow, std::move(value), options);
      if (args->json) {
        session.out() << json::toText(json::object{{"id", result.id}, {"status", "submitted"}})
                      << std::endl;
      } else {
        session.out() << "submitted " << result.id << "; `loom worker` runs it (or `loom resume "
                      << result.id << "`)" << std::endl;
      }
      return kExitOk;
    }
    auto result = session.runtime(true).start(workflow, std::move(value), options);
    return report(session, result, args->json, false);
  };
}

Action setupResume(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string id;
    std::string config;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("ID", args->id, "The execution to continue")->required()->type_name("");
  CLI::Option* config = addRunConfigOption(command, args->config);
  config->description(
      "The loom.toml to continue it under (default: the one `loom run --config` "
      "recorded in the run, if any)");
  command.add_flag("--json", args->json,
                   std::string(kJsonHelp) +
                       ": as `loom run --json`, plus \"replayedSteps\", \"effectsRun\" and "
                       "\"replayContentStoreCalls\" (the content-store calls made while "
                       "replaying recorded steps: 0, offloaded results replay from the log)");
  command.footer(
      "Run it in a fresh process after a crash or a stop: recorded steps return their recorded\n"
      "outputs without running; at most the one step that was in flight when the process died\n"
      "runs again. An ended execution prints its recorded result and runs nothing. An agent\n"
      "app's execution loads its app file again (its absolute path is in the execution's\n"
      "input); \"modelCalls\" then counts the model turns that were not recorded. A run started\n"
      "with --config boots with that file again (its path is in the run's first event).");
  return [&session, args, config] {
    if (config->count() > 0) session.loadConfig(args->config, true);
    session.loadWhatExecutionRan(args->id);
    return report(session, session.runtime(false).resume(args->id), args->json, true);
  };
}

// Refuses (UsageError) a signal `name` that execution `id` never parked waiting for.
static void requireAwaited(const kernel::EventStore& store, const std::string& id,
                    const std::string& name) {
  bool awaited = false;
  std::string current;
  store.scan(id, 1, [&](const kernel::Event& e) {
    if (e.type != kernel::EventType::kExecutionParked) return;
    const auto* w = e.data.if_contains("waitingFor");
    if (w == nullptr || !w->is_string()) return;
    current = std::string(w->get_string());
    awaited = awaited || current == name;
  });
  if (awaited) return;
  throw UsageError("execution '" + id + "' is not waiting for signal \"" + name +
                   "\" and never waited for it" +
                   (current.empty() ? std::string() : " (it waits for \"" + current + "\")") +
                   "; a recorded signal stays for good, so check the name, or pass --force to "
                   "record it for a later wait");
}

Action setupRetry(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string id;
    std::string config;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("ID", args->id, "The retrying execution to run again now")
      ->required()
      ->type_name("");
  CLI::Option* config = addRunConfigOption(command, args->config);
  config->description("The loom.toml it runs under (default: the one its run recorded)");
  command.add_flag("--json", args->json, std::string(kJsonHelp) + ", as `loom resume --json`");
  command.footer(
      "For a run `loom ls` shows retrying: its step's last attempt failed with a retryable\n"
      "error (unavailable, deadlineExceeded; execution.retry), or its result found no room in\n"
      "the content store. The step runs again now, in this process, instead of at its next\n"
      "attempt time (a `loom resume` before then parks it again). Another failure counts as an\n"
      "attempt like any other. Refused for a run that is not retrying.");
  return [&session, args, config] {
    if (config->count() > 0) session.loadConfig(args->config, true);
    session.loadWhatExecutionRan(args->id);
    return report(session, session.runtime(false).retry(args->id), args->json, true);
  };
}

Action setupFork(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string id;
    std::string at;
    std::string input;
    std::string newId;
    std::string config;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("ID", args->id, "The run to fork (it is left as it was)")
      ->required()
      ->type_name("");
  command.add_option("--at", args->at,
                     "Where the fork starts: a step id (the fork runs that step again; `loom "
                     "log ID` lists them) or a seq (only digits: the fork keeps events before it)")
      ->required()
      ->type_name("STEP|SEQ");
  command.add_option("--input", args->input, "JSON that replaces the run's recorded input")
      ->type_name("JSON");
  command.add_option("--id", args->newId, "The fork's id (default: a fresh one)")
      ->type_name("ID");
  CLI::Option* config = addRunConfigOption(command, args->config);
  config->description("The loom.toml the fork runs under (default: the one the run recorded)");
  command.add_flag("--json", args->json, std::string(kJsonHelp) + ", as `loom resume --json`");
  command.footer(
      "Makes a new run whose log is the first one's up to that point, then continues it here on\n"
      "the code at hand (its version is recorded: `loom state NEW`). Recorded steps before the\n"
      "point replay; the rest run. The fork cites the same content-store blobs (none is\n"
      "copied), keeps the run's data subject (a sealed run's fork is sealed under the\n"
      "subject's key; erasing the subject erases both) and records \"forkedFrom\" in its first\n"
      "event. A run whose subject was erased cannot be forked.");
  return [&session, args, config] {
    if (config->count() > 0) session.loadConfig(args->config, true);
    session.loadWhatExecutionRan(args->id);
    workflow::ForkOptions fork;
    if (!args->at.empty() && args->at.find_first_not_of("0123456789") == std::string::npos) {
      int64_t seq = 0;
      auto [end, ec] = std::from_chars(args->at.data(), args->at.data() + args->at.size(), seq);
      if (ec != std::errc()) throw UsageError("--at " + args->at + " is not a seq of the log");
      fork.atSeq = seq;
    } else {
      fork.atStep = args->at;
    }
    if (!args->input.empty()) fork.input = parseFlagJson(args->input, "--input");
    fork.id = args->newId;
    return report(session, session.runtime(false).fork(args->id, fork), args->json, true);
  };
}

Action setupRerun(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string id;
    std::string newId;
    std::string config;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("ID", args->id, "The failed run to run again (it stays failed)")
      ->required()
      ->type_name("");
  command.add_option("--id", args->newId, "The new run's id (default: a fresh one)")
      ->type_name("ID");
  CLI::Option* config = addRunConfigOption(command, args->config);
  config->description("The loom.toml it runs under (default: the one the run recorded)");
  command.add_flag("--json", args->json, std::string(kJsonHelp) + ", as `loom resume --json`");
  command.footer(
      "After fixing what made a run fail (a tool, a script, a config), runs it again as a new\n"
      "run on the code at hand: `loom fork ID --at` the step whose failure ended it, or, when\n"
      "the workflow's own code failed, from after its last recorded event. Recorded steps\n"
      "replay; only the failed step and what follows run. Refused for a run that did not fail.");
  return [&session, args, config] {
    if (config->count() > 0) session.loadConfig(args->config, true);
    session.loadWhatExecutionRan(args->id);
    return report(session, session.runtime(false).rerun(args->id, args->newId), args->json,
                  true);
  };
}

Action setupCancel(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string id;
    std::string reason = "cancelled by an operator";
    std::string config;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("ID", args->id, "The execution to cancel")->required()->type_name("");
  command.add_option("--reason", args->reason, "Why, recorded in EXECUTION_CANCELLED")
      ->type_name("TEXT");
  command.add_flag("--json", args->json,
                   std::string(kJsonHelp) +
                       ": {\"id\",\"status\"}: \"cancelled\" (ended now) or \"running\" (its "
                       "runner stops at its next step)");
  CLI::Option* config = addRunConfigOption(command, args->config);
  config->description("The loom.toml it runs under (default: the one its run recorded)");
  command.footer(
      "A run nobody runs (parked, orphaned, submitted) ends at once with status cancelled. A\n"
      "run another process runs is sent the cancel signal: that runner stops at its next step\n"
      "boundary (the step in flight finishes and is recorded) and records the cancellation;\n"
      "`loom ls` shows it cancelled then. An ended run cannot be cancelled.");
  return [&session, args, config] {
    if (config->count() > 0) session.loadConfig(args->config, true);
    session.loadWhatExecutionRan(args->id);
    auto r = session.runtime(false).cancel(args->id, args->reason);
    if (args->json) {
      session.out() << json::toText(
                           json::object{{"id", r.id}, {"status", kernel::statusName(r.status)}})
                    << std::endl;
    } else if (r.status == ExecutionStatus::kCancelled) {
      session.out() << "cancelled " << r.id << std::endl;
    } else {
      session.out() << "cancel requested: " << r.id
                    << " is running in another process, which stops it at its next step; "
                       "`loom ls` shows it cancelled then"
                    << std::endl;
    }
    return kExitOk;
  };
}

Action setupSignal(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string id;
    std::string name;
    std::string payload = "null";
    std::string config;
    bool json = false;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("ID", args->id, "The execution to signal")->required()->type_name("");
  command.add_option("NAME", args->name, "The signal's name (what the workflow awaits)")
      ->required()
      ->type_name("");
  command.add_option("PAYLOAD", args->payload, "The signal's payload as JSON text (default null)")
      ->type_name("");
  command.add_flag("--json", args->json, std::string(kJsonHelp) + ", as `loom resume --json`");
  command.add_flag("--force", args->force,
                   "Record a signal the execution is not waiting for and never waited for (one "
                   "its workflow will await later)");
  CLI::Option* config = addRunConfigOption(command, args->config);
  config->description(
      "The loom.toml to continue it under (default: the one `loom run --config` "
      "recorded in the run, if any)");
  command.footer(
      "The signal is recorded in the execution's log first, so it is never lost; a parked\n"
      "execution is then resumed in this process. An execution that has ended takes no signals.\n"
      "A name the execution is not waiting for and never waited for is refused (a recorded\n"
      "signal stays for good): check the name in `loom ls`/`loom log`, or pass --force.\n"
      "An agent's tool that requires approval parks its run until\n"
      "  loom signal ID approve:<stepId> '{\"approved\": true}'\n"
      "(false, optionally with \"reason\": a string, tells the model the call was denied).\n"
      "A signal named approve:... takes only that shape; anything else is refused and nothing\n"
      "is recorded.");
  return [&session, args, config] {
    if (args->name.rfind("loom:", 0) == 0) {
      throw UsageError(
          "signal names starting with \"loom:\" are reserved for Loom; to cancel a "
          "run use `loom cancel " +
          args->id + "`");
    }
    json::value payload = parseFlagJson(args->payload, "PAYLOAD");
    try {
      if (agent::isApprovalSignal(args->name)) agent::readApprovalDecision(payload);
      if (args->name.rfind(agent::kBudgetSignalPrefix, 0) == 0) {
        agent::budgetFromJson(payload, "a budget raise");  // the limits it names, or refused
      }
    } catch (const InvalidArgumentError& e) {
      throw UsageError(std::string(e.what()) + "; nothing was recorded");
    }
    if (config->count() > 0) session.loadConfig(args->config, true);
    session.loadWhatExecutionRan(args->id);
    if (!args->force) requireAwaited(session.store(false), args->id, args->name);
    try {
      auto result = session.runtime(false).signal(args->id, args->name, std::move(payload));
      return report(session, result, args->json, true);
    } catch (const workflow::VersionMismatchError& e) {
      throw workflow::VersionMismatchError(
          e, "; the signal is recorded, and the run gets it when it continues on its own code");
    }
  };
}

}  // namespace loom::cli
