// The operator's session over a home (HomeSession), shared by the `loom` command line and the
// workers that run what runs recorded (RecordedApps). ADR 0026.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "app/home_record.h"
#include "app/storage_location.h"
#include "compliance/event_sealing.h"
#include "content/counting_content_store.h"
#include "loom/agent_app/agent_app.h"
#include "loom/app/app.h"
#include "loom/compliance/key_store.h"
#include "loom/effects/task.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/lease.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/middleware/kill_switch_store.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"
#include "loom/workflow/workflow.h"

namespace loom::host {

// A bad command line that the parser could not catch (malformed JSON in a flag, an unknown
// --durability): exit code 2. The message names the flag.
class UsageError : public InvalidArgumentError {
 public:
  explicit UsageError(const std::string& message) : InvalidArgumentError(message) {}
};

// The options a session opens a home with: the command line's global options (shared by
// every subcommand), or a host's.
struct HomeOptions {
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
  // A host that reads each result (a language package, cli::invoke): a run that ended failed
  // is not also reported on stderr.
  bool quietFailures = false;
  // The lease the `loom worker` that started this process claimed for the run it resumes
  // (LOOM_CLAIMED_LEASE): the runtime takes it over at once.
  std::optional<kernel::ClaimedLease> claimedLease;
  // Told what the runs of this session do (RuntimeOptions::onRunEvent): `loom`'s progress line
  // on a terminal. Empty: nobody.
  std::function<void(const workflow::RunEvent&)> onRunEvent;
};

// Reads LOOM_DATABASE_URL and LOOM_DATABASE_SCHEMA into `options` (what every host applies
// after its own options: the command line, a language package's worker).
void readDatabaseEnvironment(HomeOptions& options);

// The operator's session over one home: what a `loom` subcommand (or a worker's run) runs in.
// The registries, the output stream, the config or agent app a command names or a run
// recorded, the home's recorded keys and, opened on first use, the home's event store (read
// with those keys) or the app booted from all that (app::boot: the kill switch and every
// configured middleware in the chain) and its runtime. Not thread-safe until booted; after
// runtime() returned, runtime() and store() may be called from any thread.
class HomeSession {
 public:
  // `codeConfig`: the program's own Config (cli::main's), booted when no file is given; null
  // for the stock binary.
  HomeSession(workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks, std::ostream& out,
          std::shared_ptr<const app::Config> codeConfig = nullptr);
  ~HomeSession();

  HomeOptions& options() { return options_; }
  // A session of this program with the same global options, over the registries given
  // (nullptr: this session's): `loom worker` boots one per app its runs recorded.
  std::unique_ptr<HomeSession> sibling(workflow::WorkflowRegistry* workflows,
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
  HomeOptions options_;
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

}  // namespace loom::host
