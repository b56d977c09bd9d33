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
#include <optional>
#include <span>
#include <string>
#include <string_view>

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
  // Whether the command line (or LOOM_HOME) gave them: then they win over an app file's
  // storage.home and storage.eventStore.durability.
  bool homeGiven = false;
  bool durabilityGiven = false;
  // LOOM_DATABASE_URL and LOOM_DATABASE_SCHEMA (empty: unset): when the url is set, every
  // store is in that PostgreSQL schema, whatever a config file's storage.url says.
  std::string databaseUrl;
  std::string databaseSchema;
};

// What a subcommand runs in: the registries, the output stream, the agent app it loaded (if
// any) and, opened on first use, the home's event store or the booted app (app::boot: the
// kill switch and every configured middleware in the chain) and its runtime.
class Session {
 public:
  // `codeConfig`: the program's own Config (cli::main's), booted when no file is given; null
  // for the stock binary.
  Session(workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks, std::ostream& out,
          std::shared_ptr<const app::Config> codeConfig = nullptr);
  ~Session();

  GlobalOptions& options() { return options_; }
  // A session of this program with the same global options, over the registries given
  // (nullptr: this session's): `loom worker` boots one per app its runs recorded.
  std::unique_ptr<Session> sibling(workflow::WorkflowRegistry* workflows,
                                   effects::TaskRegistry* tasks) const;
  const workflow::WorkflowRegistry& workflows() const { return workflows_; }
  const effects::TaskRegistry& tasks() const { return tasks_; }
  std::ostream& out() { return out_; }

  // The home's event store (<home>/loom.db, or PostgreSQL), for reading. Without create, a
  // home with no loom.db is a NotFoundError telling how to point at the right one. After
  // runtime(), the booted app's store.
  kernel::EventStore& store(bool create);
  // Boots the app over the home (with the loaded agent app's config) and returns its
  // runtime. With create, makes the home when missing; without, as store(false).
  workflow::WorkflowRuntime& runtime(bool create);
  // Where the home's stores are: --home (or the loaded app's or config's storage.home when
  // --home was not given), and LOOM_DATABASE_URL or the config's storage.url.
  app::StorageLocation location() const;
  // Refuses (NotFoundError naming --home) when the home has no loom.db: nothing ran there.
  void requireDatabase() const;
  // Closes every store this session opened (the next use reopens them, as a new process
  // would): a long-lived server does so after a failed flush, which stops every write of this
  // process to the file until its last connection closes.
  void closeStores();

  // Loads the agent app at `file` and registers it; its config is what runtime() boots.
  // Throws ConfigValidationError listing the file's problems. Call before runtime().
  const agent_app::AgentApp& loadApp(const std::filesystem::path& file);
  // Before resume/signal of `executionId`: when its workflow is not registered and its input
  // names an app file, loads that app (which must still define the same agent); when it is
  // registered and was started with a config file (EXECUTION_STARTED "configFile") and no
  // --config was given, loads that file. Either way the home stays the execution's. Returns
  // the app, nullptr for an execution of a registered workflow. NotFoundError for an unknown
  // id; ConfigError when the recorded file cannot be loaded any more.
  const agent_app::AgentApp* loadWhatExecutionRan(const std::string& executionId);
  const agent_app::AgentApp* agentApp() const { return app_ ? &*app_ : nullptr; }

  // `event` of execution `executionId` as `loom log` shows it when it comes from an archive
  // segment (which holds events as stored): unsealed with the --config file's keys, else the
  // home's recorded keys, as store(false) unseals live events; without keys a sealed event is
  // the SealedEventError store(false) gives, saying how to provide them.
  kernel::Event openArchived(const std::string& executionId, const kernel::Event& event);

  // The kill switch of the home (its loom.db must exist).
  middleware::KillSwitchStore& killSwitch();

  // Uses the config in `file` (loom.toml: storage, execution...) instead of the defaults when
  // booting; its storage.home applies unless --home was given. Call before runtime(). With
  // `runs`, the program's own workflows run under it (run, resume, signal: its
  // execution.claimCheck.toolIds must name registered tools); without, it is booted only to
  // read what its runs recorded (inspection, export, erasure, sweep).
  void loadConfig(const std::filesystem::path& file, bool runs = false);
  bool hasConfig() const { return config_ != nullptr; }
  // The absolute path of the file loadConfig loaded; empty when none.
  const std::string& configFile() const { return configFile_; }

  // The booted app (boots it like runtime(create) when needed): its content store, snapshots
  // and archive folder, for `loom sweep` and `loom retention run`.
  app::App& app(bool create);

  // For commands that refuse sealed events themselves (the sweep): when the home's recorded
  // keys cannot be loaded, boot without them instead of failing; keysUnavailable() says why.
  void setKeysOptional() { keysOptional_ = true; }
  // For commands that write to one run (run, --submit; resume, signal, cancel and retry
  // through loadWhatExecutionRan): `subject` is that run's data subject, `run` names it in
  // messages. With the home's recorded keys, the master key is then needed only when the run
  // is sealed (a subject under compliance.erase), the home seals every run (security.crypto)
  // or its content store (storage.contentStore.sealed); then a missing key is refused saying
  // which. Otherwise boot goes on without keys: the run writes nothing that would be sealed.
  void setWritesTo(std::string run, std::optional<std::string> subject) {
    writesTo_ = WritesTo{std::move(run), std::move(subject)};
  }
  const std::optional<std::string>& keysUnavailable() const { return keysUnavailable_; }

  // Content-store calls the last resume or signal made while it replayed recorded steps
  // (ADR 0140 D6: a replay makes none): every call of the booted app's store until the run
  // left its recorded part.
  int64_t replayContentStoreCalls() const;

 private:
  kernel::Durability durability() const;
  // Opens reader_ over store_: unsealing with the home's recorded keys when they load,
  // refusing sealed events (naming how to give the keys) otherwise.
  void openReader(const app::StorageLocation& where);
  // The config a command boots or reads with: the app's, the --config file's, the program's.
  const app::Config* fileConfig() const;

  workflow::WorkflowRegistry& workflows_;
  effects::TaskRegistry& tasks_;
  std::ostream& out_;
  GlobalOptions options_;
  std::optional<agent_app::AgentApp> app_;     // registered in the registries; outlives booted_
  std::shared_ptr<const app::Config> config_;  // --config, when no agent app is loaded
  std::string configFile_;                     // config_'s file, absolute
  bool configRuns_ = false;                    // config_ runs the program's workflows
  std::shared_ptr<const app::Config> codeConfig_;  // the program's Config, when no file is
  std::unique_ptr<kernel::EventStore> store_;  // the home's log store, before any boot
  std::unique_ptr<compliance::KeyStore> keys_;  // the home's recorded keys, for reader_
  std::unique_ptr<kernel::EventStore> reader_;  // store_ as commands read it (see store())
  std::string howToOpenSealed_{kernel::kHowToOpenSealed};       // what reader_ says refusing one
  std::unique_ptr<compliance::EventUnsealer> archiveUnsealer_;  // openArchived's
  std::unique_ptr<middleware::KillSwitchStore> killSwitch_;
  std::unique_ptr<app::App> booted_;
  // booted_'s store refusing sealed events, when it booted without the home's keys
  std::unique_ptr<kernel::EventStore> bootedReader_;
  std::shared_ptr<content::CountingContentStore> counting_;  // wraps the booted content store
  std::optional<int64_t> callsAtReplayEnd_;
  bool keysOptional_ = false;
  std::optional<std::string> keysUnavailable_;
  struct WritesTo {
    std::string run;
    std::optional<std::string> subject;
  };
  std::optional<WritesTo> writesTo_;  // see setWritesTo
  // Why the run writesTo_ (set) names needs the master key under these settings; nullopt
  // when it does not.
  std::optional<std::string> whyKeysAreNeeded(bool crypto, bool sealedStore, bool erase) const;
  // Before boot, for a command that writes to a run: a master key `config` names but that
  // cannot be loaded is a ConfigError saying why this command needs it.
  void requireMasterKey(const app::Config& config) const;
  // For a run with a subject under a file's config: refused when the home seals the runs of a
  // subject (its record says compliance.erase) and the file does not.
  void requireSealingAsRecorded(const app::Config& config) const;
};

// The data of execution `id`'s EXECUTION_STARTED (its input, configFile, ...); empty when
// the execution has no event.
json::object startedDataOf(const kernel::EventStore& store, const std::string& id);

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
// kill_commands.cc, config_commands.cc, help_markdown.cc.
Action setupRun(CLI::App& command, Session& session);
Action setupResume(CLI::App& command, Session& session);
Action setupSignal(CLI::App& command, Session& session);
Action setupCancel(CLI::App& command, Session& session);
Action setupRetry(CLI::App& command, Session& session);   // run_commands.cc  // run_commands.cc
Action setupWorker(CLI::App& command, Session& session);  // worker_command.cc
// In a run's child process of `loom worker`: dies with the worker (PR_SET_PDEATHSIG). Called
// first thing by main(); does nothing in any other process.
void dieWithWorkerIfAsked();
// The lease the worker that started this process claimed for it (LOOM_CLAIMED_LEASE), read by
// dieWithWorkerIfAsked; nullopt when no worker started it.
const std::optional<kernel::ClaimedLease>& claimedLeaseFromWorker();
Action setupLs(CLI::App& command, Session& session);
Action setupServe(CLI::App& command, Session& session);  // serve_command.cc
Action setupLog(CLI::App& command, Session& session);
Action setupState(CLI::App& command, Session& session);
Action setupKill(CLI::App& command, Session& session);
Action setupUnkill(CLI::App& command, Session& session);
Action setupKilled(CLI::App& command, Session& session);
Action setupConfig(CLI::App& command, Session& session);
Action setupHelpMarkdown(CLI::App& command, Session& session);
Action setupSweep(CLI::App& command, Session& session);      // storage_commands.cc
Action setupRetention(CLI::App& command, Session& session);  // storage_commands.cc
Action setupBench(CLI::App& command, Session& session);      // bench_commands.cc
Action setupSim(CLI::App& command, Session& session);        // sim_command.cc
Action setupErase(CLI::App& command, Session& session);      // compliance_commands.cc
Action setupExport(CLI::App& command, Session& session);     // compliance_commands.cc
Action setupDoctor(CLI::App& command, Session& session);     // doctor_command.cc
Action setupKeys(CLI::App& command, Session& session);       // compliance_commands.cc
Action setupDb(CLI::App& command, Session& session);         // db_commands.cc
Action setupMigrateHome(CLI::App& command, Session& session);  // db_commands.cc

// The object `loom kill --json` and `loom killed --json` print: {"changed"?, "stops":
// [{"effectId", "at"}]} (kill_commands.cc).
json::object stopsJson(const std::vector<middleware::KillSwitchEntry>& stops,
                       std::optional<bool> changed);

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
