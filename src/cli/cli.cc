// loom::cli::main: builds the CLI11 application from the subcommand table, parses, runs the
// chosen subcommand and maps every outcome to an exit code and at most one stderr line.
#include "loom/cli/cli.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "command.h"
#include "loom/app/config.h"
#include "loom/kernel/version.h"
#include "loom/util/error.h"
#include "inspect/inspector_server.h"
#include "progress_line.h"

#ifndef LOOM_VERSION
#error "LOOM_VERSION must be defined by the build (src/cli/CMakeLists.txt)"
#endif

namespace loom::cli {

namespace {

constexpr Subcommand kSubcommands[] = {
    {"run",
     "Start a workflow (or an agent app file) as a new durable execution and run it until it "
     "ends or parks",
     setupRun},
    {"resume", "Continue an execution from its log: recorded steps replay, the rest run",
     setupResume},
    {"signal", "Record a signal for an execution, then resume it if it is parked", setupSignal},
    {"retry", "Run again now the failed step of a retrying execution (see `loom ls`)", setupRetry},
    {"fork", "Start a new run from a recorded run's log up to a step, on the code at hand",
     setupFork},
    {"rerun", "Run a failed run again from its failed step, on the code at hand (a new run)",
     setupRerun},
    {"replay-check",
     "Replay recorded runs against the code at hand, in memory, and report where they diverge",
     setupReplayCheck},
    {"upgrade",
     "Move runs that have not ended to the code at hand, each only if its log replays on it",
     setupUpgrade},
    {"cancel", "End an execution: at once when nobody runs it, else at its runner's next step",
     setupCancel},
    {"worker",
     "Run, until stopped, every execution nobody runs: orphaned by a crash, or submitted with "
     "`loom run --submit`",
     setupWorker},
    {"ls", "List the executions in the home folder", setupLs},
    {"usage", "Add up the model tokens and cost the runs recorded, by subject, workflow or model",
     setupUsage},
    {"serve", "Serve the inspector: a web page and an HTTP API to see and steer runs",
     setupServe},
    {"log", "Print the events of one execution's log", setupLog},
    {"follow", "Print an execution's events as they are journaled, until it ends", setupFollow},
    {"state", "Print the folded state of one execution (an agent's: its loops' state)", setupState},
    {"kill", "Stop an effect (or every effect) in every process using this home", setupKill},
    {"unkill", "Lift a stop set by `loom kill`", setupUnkill},
    {"killed", "List the effects `loom kill` stopped (same as `loom kill --list`)", setupKilled},
    {"config", "Check a loom.toml (or agent app) file: `loom config check FILE`", setupConfig},
    {"sweep", "Delete the content-store blobs that no log, archive or snapshot needs", setupSweep},
    {"retention", "Archive, then discard, the logs of old ended executions: `loom retention run`",
     setupRetention},
    {"erase", "Erase a data subject: shred their key, delete the blobs only they cite", setupErase},
    {"export", "Export everything held on a data subject as one JSON file", setupExport},
    {"doctor",
     "Say what the home's record points at (content store, its id, key origin) and which "
     "other homes use its store",
     setupDoctor},
    {"keys", "Key management: `loom keys new-master` prints a fresh master key", setupKeys},
    {"db", "PostgreSQL: `loom db migrate` creates or upgrades Loom's tables in a schema", setupDb},
    {"migrate-home",
     "Copy an embedded home (logs, control log, snapshots, blobs, keys) into PostgreSQL and "
     "verify the copy",
     setupMigrateHome},
    {"bench", "Measure: `loom bench claim-check` prints the ADR 0140 table", setupBench},
    {"sim",
     "Simulate: seeded runs under crashes, disk faults and races, each seed replayable exactly",
     setupSim},
    {"help-markdown", "Print docs/cli.md, generated from this table", setupHelpMarkdown},
};

struct Program {
  CLI::App app;
  std::vector<std::pair<CLI::App*, Action>> actions;
  CLI::Option* home = nullptr;
  CLI::Option* durability = nullptr;
  bool quiet = false;                     // --quiet: no progress line
  std::unique_ptr<ProgressLine> progress;  // while a command that runs runs
};

// "`loom run --help`" when the parse got as far as a subcommand, "`loom --help`" otherwise.
std::string helpHint(const Program& program) {
  for (const auto& [command, action] : program.actions) {
    if (command->count() > 0) return "`loom " + command->get_name() + " --help`";
  }
  return "`loom --help`";
}

void buildProgram(Program& program, HomeSession& session) {
  CLI::App& app = program.app;
  app.name("loom");
  app.description(std::string(kAbout));
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand: `loom ls --home DIR`
  app.set_version_flag("--version", versionText(), "Print the Loom version and exit");
  HomeOptions& global = session.options();
  program.home = app.add_option("--home", global.home,
                                "The Loom home folder, which holds loom.db (default ./.loom)")
                     ->envname("LOOM_HOME")
                     ->type_name("DIR");
  program.durability =
      app.add_option("--durability", global.durability,
                     "full (default) or normal; see `loom run --help` for how to choose")
          ->type_name("MODE");
  app.add_flag("--quiet", program.quiet,
               "No live progress line on a terminal (stderr that is not a terminal never gets "
               "one)");
  for (const Subcommand& row : kSubcommands) {
    CLI::App* command = app.add_subcommand(std::string(row.name), std::string(row.help));
    program.actions.emplace_back(command, row.setup(*command, session));
  }
  app.footer(std::string(kPostgresHelp) + "\n\n" + std::string(kExitCodesHelp));  // after the subcommands, which would inherit it
}

}  // namespace

namespace {

// Set once the command line is read: the line asked for --json, so an error is one JSON value
// on stdout, {"error": {"code", "message"}}, instead of a line on stderr.
bool errorsAsJson = false;

std::string oneLine(std::string_view message) {
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';  // one line per error, whatever the message holds
  }
  return line;
}

// The error that ends the command: under --json one JSON value on stdout, else printError.
void printFailure(std::string_view message, ErrorCode code) {
  if (!errorsAsJson) return printError(message);
  json::object error{{"code", errorCodeName(code)}, {"message", oneLine(message)}};
  std::cout << json::toText(json::object{{"error", std::move(error)}}) << std::endl;
}
}  // namespace

void printError(std::string_view message) {
  std::cerr << "loom: " << oneLine(message) << std::endl;
}

namespace {
// An invalid config: its headline, then each problem on a line of its own (as `loom config
// check` prints them); under --json one value whose error lists them as "problems".
void printConfigProblems(const app::ConfigValidationError& e) {
  std::string_view text = e.what();
  std::string headline(text.substr(0, text.find('\n')));
  if (errorsAsJson) {
    json::array problems;
    for (const auto& issue : e.issues()) {
      problems.push_back(json::object{{"path", issue.path}, {"message", issue.message}});
    }
    json::object error{{"code", errorCodeName(e.code())},
                       {"message", oneLine(text)},
                       {"problems", std::move(problems)}};
    std::cout << json::toText(json::object{{"error", std::move(error)}}) << std::endl;
    return;
  }
  std::cerr << "loom: " << oneLine(headline) << '\n';
  for (const auto& issue : e.issues()) {
    std::cerr << "  "
              << oneLine(issue.path.empty() ? issue.message : issue.path + ": " + issue.message)
              << '\n';
  }
  std::cerr.flush();
}
}  // namespace

// For a parent that runs this command (`loom serve`'s operations): the error's code, on a line
// of its own after the message, when kErrorCodeLineEnv is set.
static void printErrorCode(ErrorCode code) {
  if (std::getenv(inspect::kErrorCodeLineEnv) == nullptr) return;
  std::cerr << inspect::kErrorCodePrefix << errorCodeName(code) << std::endl;
}

json::value parseFlagJson(const std::string& text, std::string_view flag) {
  try {
    return json::parse(text, flag);
  } catch (const InvalidArgumentError& e) {
    throw UsageError(std::string(e.what()) +
                     "; pass one JSON value, quoted for the shell, e.g. '{\"steps\": 3}'");
  }
}

std::span<const Subcommand> subcommands() { return kSubcommands; }

namespace {

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Where the subcommand word is: the first argument that is neither an option nor the value of
// --home or --durability given before it. args.size() when there is none.
std::size_t subcommandIndex(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--home" || args[i] == "--durability") {
      ++i;
      continue;
    }
    if (!args[i].empty() && args[i][0] != '-') return i;
  }
  return args.size();
}

// True when `--json` stands among the options (before a `--`, after which words are values).
bool asksForJson(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") return false;
    if (args[i] == "--json") return true;
  }
  return false;
}

// `loom help [command]` becomes `loom [command] --help`; an unknown subcommand is a usage
// error naming the closest one. Returns that error when the line is refused.
std::optional<std::string> rewriteHelpAndCheckName(std::vector<std::string>& args) {
  std::size_t at = subcommandIndex(args);
  if (at == args.size()) return std::nullopt;
  if (args[at] == "help") {
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(at));
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(std::min(at + 1, args.size())),
                "--help");
    return std::nullopt;
  }
  std::string_view best;
  std::size_t bestDistance = 3;  // suggest only a close name
  for (const Subcommand& c : kSubcommands) {
    if (c.name == args[at]) return std::nullopt;
    std::size_t d = editDistance(args[at], c.name);
    if (d < bestDistance) bestDistance = d, best = c.name;
  }
  return "unknown subcommand '" + args[at] + "'" +
         (best.empty() ? std::string() : "; did you mean `loom " + std::string(best) + "`?") +
         " See `loom --help` for the list";
}

// After the parse: the global options the line gave, then the chosen subcommand's action.
int runChosen(Program& program, HomeSession& session) {
  session.options().homeGiven = program.home->count() > 0;
  host::readDatabaseEnvironment(session.options());
  session.options().durabilityGiven = program.durability->count() > 0;
  for (auto& [command, action] : program.actions) {
    if (!command->parsed()) continue;
    static const std::set<std::string> kRunning = {"run",  "resume", "signal",
                                                   "retry", "fork",  "rerun"};
    if (kRunning.contains(command->get_name())) {  // a live line while the run runs here
      program.progress = std::make_unique<ProgressLine>(!program.quiet && isatty(STDERR_FILENO));
      session.options().onRunEvent = [line = program.progress.get()](
                                         const workflow::RunEvent& e) { line->onEvent(e); };
    }
    int code = action();
    if (program.progress) program.progress->clear();
    return code;
  }
  throw UsageError("no subcommand given; see `loom --help`");  // require_subcommand prevents it
}

std::vector<char*> argvOf(std::vector<std::string>& args) {
  std::vector<char*> line;
  for (auto& a : args) line.push_back(a.data());
  return line;
}

}  // namespace

std::string versionText() {
  return std::string("loom ") + LOOM_VERSION + " (KERNEL_ABI " + std::to_string(KERNEL_ABI) +
         ", EVENT_SCHEMA " + std::to_string(EVENT_SCHEMA) + ")";
}

int main(int argc, char** argv, workflow::WorkflowRegistry& workflows,
         effects::TaskRegistry& tasks) {
  return main(argc, argv, workflows, tasks, nullptr);
}

int main(int argc, char** argv, workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks,
         std::shared_ptr<const app::Config> config) {
  dieWithWorkerIfAsked();
  try {
    HomeSession session(workflows, tasks, std::cout, std::move(config));
    session.options().claimedLease = claimedLeaseFromWorker();
    Program program;
    buildProgram(program, session);
    std::vector<std::string> args(argv, argv + argc);
    errorsAsJson = asksForJson(args);
    if (auto refused = rewriteHelpAndCheckName(args)) {
      printFailure(*refused, ErrorCode::kInvalidArgument);
      return kExitUsage;
    }
    std::vector<char*> line = argvOf(args);
    try {
      program.app.parse(static_cast<int>(line.size()), line.data());
    } catch (const CLI::CallForHelp& e) {
      return program.app.exit(e, std::cout, std::cerr);
    } catch (const CLI::CallForAllHelp& e) {
      return program.app.exit(e, std::cout, std::cerr);
    } catch (const CLI::CallForVersion& e) {
      return program.app.exit(e, std::cout, std::cerr);
    } catch (const CLI::ParseError& e) {
      printFailure(std::string(e.what()) + "; see " + helpHint(program),
                   ErrorCode::kInvalidArgument);
      return kExitUsage;
    }
    return runChosen(program, session);
  } catch (const UsageError& e) {
    printFailure(e.what(), e.code());
    printErrorCode(e.code());
    return kExitUsage;
  } catch (const app::ConfigValidationError& e) {
    printConfigProblems(e);
    printErrorCode(e.code());
    return kExitFailure;
  } catch (const Error& e) {
    printFailure(e.what(), e.code());
    printErrorCode(e.code());
    return kExitFailure;
  } catch (const std::exception& e) {
    printFailure(std::string("internal error: ") + e.what() +
                     "; this is a bug in Loom, please report it with the command you ran",
                 ErrorCode::kInternal);
    return kExitFailure;
  }
}

int invoke(std::vector<std::string> args, workflow::WorkflowRegistry& workflows,
           effects::TaskRegistry& tasks, std::shared_ptr<const app::Config> config,
           std::ostream& out) {
  HomeSession session(workflows, tasks, out, std::move(config));
  session.options().quietFailures = true;
  Program program;
  buildProgram(program, session);
  args.insert(args.begin(), "loom");
  if (auto refused = rewriteHelpAndCheckName(args)) throw UsageError(*refused);
  std::vector<char*> line = argvOf(args);
  try {
    program.app.parse(static_cast<int>(line.size()), line.data());
  } catch (const CLI::Success& e) {  // --help, --version: printed to `out`
    return program.app.exit(e, out, out);
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + "; see " + helpHint(program));
  }
  return runChosen(program, session);
}

}  // namespace loom::cli
