// Internals of the `loom` command line: the subcommand table, the Session every subcommand
// runs in, and the error that means "bad command line" (exit code 2). Each row of kSubcommands
// is {name, one-line help, setup}; setup adds the row's arguments to its CLI11 subcommand and
// returns the action to run when that subcommand is chosen. `loom --help`, `loom <name>
// --help` and docs/cli.md (`loom help-markdown`) are all generated from these rows, so they
// cannot drift. Not thread-safe: one Session per process invocation.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "loom/cli/cli.h"
#include "loom/effects/task.h"
#include "loom/kernel/event_store.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"
#include "loom/workflow/workflow.h"

namespace CLI {
class App;
}  // namespace CLI

namespace loom::cli {

// A bad command line that the parser could not catch (malformed JSON in a flag, an unknown
// --durability): exit code 2. The message names the flag.
class UsageError : public InvalidArgumentError {
 public:
  explicit UsageError(const std::string& message) : InvalidArgumentError(message) {}
};

// Options of the root command, shared by every subcommand.
struct GlobalOptions {
  std::string home = "./.loom";  // --home, LOOM_HOME
  std::string durability = "full";
};

// What a subcommand runs in: the registries, the output streams and, opened on first use,
// the home's event store and a workflow runtime over it.
class Session {
 public:
  Session(const workflow::WorkflowRegistry& workflows, const effects::TaskRegistry& tasks,
          std::ostream& out);
  ~Session();

  GlobalOptions& options() { return options_; }
  const workflow::WorkflowRegistry& workflows() const { return workflows_; }
  std::ostream& out() { return out_; }

  // The event store in <home>/loom.db. With create, makes the home folder when missing;
  // without, a home with no loom.db is a NotFoundError telling how to point at the right one.
  kernel::EventStore& store(bool create);
  workflow::WorkflowRuntime& runtime(bool create);
  std::filesystem::path databasePath() const;

 private:
  const workflow::WorkflowRegistry& workflows_;
  const effects::TaskRegistry& tasks_;
  std::ostream& out_;
  GlobalOptions options_;
  std::unique_ptr<kernel::EventStore> store_;
  std::unique_ptr<workflow::WorkflowRuntime> runtime_;  // destroyed before store_
};

// What runs when a subcommand is chosen; returns the exit code.
using Action = std::function<int()>;

struct Subcommand {
  std::string_view name;
  std::string_view help;  // one line: `loom --help`, and the first line of its section
  // Adds the subcommand's arguments and longer help (footer) to `command`; returns its action.
  Action (*setup)(CLI::App& command, Session& session);
};

// The subcommand table, in the order `loom --help` and docs/cli.md list them.
std::span<const Subcommand> subcommands();

// Setup functions, one file per group: run_commands.cc, inspect_commands.cc,
// help_markdown.cc.
Action setupRun(CLI::App& command, Session& session);
Action setupResume(CLI::App& command, Session& session);
Action setupSignal(CLI::App& command, Session& session);
Action setupLs(CLI::App& command, Session& session);
Action setupLog(CLI::App& command, Session& session);
Action setupState(CLI::App& command, Session& session);
Action setupHelpMarkdown(CLI::App& command, Session& session);

// Writes "loom: <message>" as one line to stderr (newlines in the message become spaces).
void printError(std::string_view message);

// Parses the JSON text given to `flag`; malformed text is a UsageError naming the flag.
json::value parseFlagJson(const std::string& text, std::string_view flag);

// Text shared by `loom --help` and docs/cli.md.
extern const std::string_view kAbout;
extern const std::string_view kExitCodesHelp;
extern const std::string_view kDurabilityHelp;
std::string versionText();

}  // namespace loom::cli
