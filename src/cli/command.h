// Internals of the `loom` command line: the subcommand table; every subcommand runs in a
// host::HomeSession (host/home_session.h), and host::UsageError means "bad command line"
// (exit code 2). Each row of kSubcommands
// is {name, one-line help, setup}; setup adds the row's arguments to its CLI11 subcommand and
// returns the action to run when that subcommand is chosen. `loom --help`, `loom <name>
// --help` and docs/cli.md (`loom help-markdown`) are all generated from these rows, so they
// cannot drift. Not thread-safe: one HomeSession per process invocation.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "host/home_session.h"
#include "app/home_record.h"
#include "app/storage_location.h"
#include "compliance/event_sealing.h"
#include "content/counting_content_store.h"
#include "loom/agent_app/agent_app.h"
#include "loom/app/app.h"
#include "loom/cli/cli.h"
#include "loom/compliance/key_store.h"
#include "loom/effects/task.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/middleware/kill_switch_store.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"
#include "loom/workflow/workflow.h"

namespace CLI {
class App;
}  // namespace CLI

namespace loom::cli {

using host::HomeOptions;
using host::HomeSession;
using host::startedDataOf;
using host::UsageError;

// What runs when a subcommand is chosen; returns the exit code.
using Action = std::function<int()>;

struct Subcommand {
  std::string_view name;
  std::string_view help;  // one line: `loom --help`, and the first line of its section
  // Adds the subcommand's arguments and longer help (footer) to `command`; returns its action.
  Action (*setup)(CLI::App& command, HomeSession& session);
};

// The subcommand table, in the order `loom --help` and docs/cli.md list them.
std::span<const Subcommand> subcommands();

// Setup functions, one file per group: run_commands.cc, inspect_commands.cc,
// kill_commands.cc, config_commands.cc, help_markdown.cc.
Action setupRun(CLI::App& command, HomeSession& session);
Action setupResume(CLI::App& command, HomeSession& session);
Action setupSignal(CLI::App& command, HomeSession& session);
Action setupCancel(CLI::App& command, HomeSession& session);
Action setupRetry(CLI::App& command, HomeSession& session);   // run_commands.cc
Action setupFork(CLI::App& command, HomeSession& session);    // run_commands.cc
Action setupRerun(CLI::App& command, HomeSession& session);   // run_commands.cc
Action setupReplayCheck(CLI::App& command, HomeSession& session);  // replay_check_command.cc
Action setupUpgrade(CLI::App& command, HomeSession& session);  // upgrade_command.cc
Action setupUsage(CLI::App& command, HomeSession& session);    // usage_command.cc
Action setupFollow(CLI::App& command, HomeSession& session);   // follow_command.cc
// --config FILE for a command that reads runs: sealed logs are unsealed with its keys
// (inspect_commands.cc).
void addConfigOption(CLI::App& command, HomeSession& session);
Action setupWorker(CLI::App& command, HomeSession& session);  // worker_command.cc
// In a run's child process of `loom worker`: dies with the worker (PR_SET_PDEATHSIG). Called
// first thing by main(); does nothing in any other process.
void dieWithWorkerIfAsked();
// The lease the worker that started this process claimed for it (LOOM_CLAIMED_LEASE), read by
// dieWithWorkerIfAsked; nullopt when no worker started it.
const std::optional<kernel::ClaimedLease>& claimedLeaseFromWorker();
Action setupLs(CLI::App& command, HomeSession& session);
Action setupServe(CLI::App& command, HomeSession& session);  // serve_command.cc
Action setupLog(CLI::App& command, HomeSession& session);
Action setupState(CLI::App& command, HomeSession& session);
Action setupKill(CLI::App& command, HomeSession& session);
Action setupUnkill(CLI::App& command, HomeSession& session);
Action setupKilled(CLI::App& command, HomeSession& session);
Action setupConfig(CLI::App& command, HomeSession& session);
Action setupHelpMarkdown(CLI::App& command, HomeSession& session);
Action setupSweep(CLI::App& command, HomeSession& session);      // storage_commands.cc
Action setupRetention(CLI::App& command, HomeSession& session);  // storage_commands.cc
Action setupBench(CLI::App& command, HomeSession& session);      // bench_commands.cc
Action setupSim(CLI::App& command, HomeSession& session);        // sim_command.cc
Action setupErase(CLI::App& command, HomeSession& session);      // compliance_commands.cc
Action setupExport(CLI::App& command, HomeSession& session);     // compliance_commands.cc
Action setupDoctor(CLI::App& command, HomeSession& session);     // doctor_command.cc
Action setupKeys(CLI::App& command, HomeSession& session);       // compliance_commands.cc
Action setupDb(CLI::App& command, HomeSession& session);         // db_commands.cc
Action setupMigrateHome(CLI::App& command, HomeSession& session);  // db_commands.cc

// Writes "loom: <message>" as one line to stderr (newlines in the message become spaces).
// A command that fails throws; loom::cli::main prints its error (under --json as one JSON
// value {"error": {"code", "message"}} on stdout).
void printError(std::string_view message);

// Parses the JSON text given to `flag`; malformed text is a UsageError naming the flag.
json::value parseFlagJson(const std::string& text, std::string_view flag);

// Text shared by `loom --help` and docs/cli.md.
extern const std::string_view kAbout;
extern const std::string_view kExitCodesHelp;
extern const std::string_view kPostgresHelp;
extern const std::string_view kDurabilityHelp;
extern const std::string_view kAgentAppHelp;
std::string versionText();

}  // namespace loom::cli
