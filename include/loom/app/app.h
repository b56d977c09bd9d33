// Boot: composes a Loom app from a validated, frozen Config (DESIGN §3 step 1). It re-checks
// the config, builds every middleware, and only then creates the home folder and opens the
// stores; so a config that fails validation opens and creates nothing. The middleware chain
// is built ONCE here, outermost first: kill switch -> (claim-check, when configured) ->
// secret redaction (when security.redact is set) -> every execution.effectMiddleware entry
// in order -> the effect. The App owns what boot built; the registries it was given must
// outlive it. Thread-safety: App's accessors are thread-safe (the runtime and stores are).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include "loom/app/config.h"
#include "loom/compliance/blob_ledger.h"
#include "loom/compliance/key_store.h"
#include "loom/content/content_store.h"
#include "loom/effects/middleware.h"
#include "loom/effects/task.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/snapshot_store.h"
#include "loom/middleware/kill_switch_store.h"
#include "loom/sweep/archive_store.h"
#include "loom/sweep/retention.h"
#include "loom/sweep/supersede.h"
#include "loom/util/clock.h"
#include "loom/workflow/runtime.h"
#include "loom/workflow/workflow.h"

namespace loom::app {

struct BootOptions {
  // The runtime's and the kill switch's clock (a ManualClock in tests).
  std::shared_ptr<const Clock> clock = systemClock();
  // Worker threads of the runtime's *Async methods; 0 = hardware concurrency.
  unsigned workers = 0;
  // Wraps the default content store after it is opened (e.g. a counting store, so a CLI can
  // report the calls a replay made); the wrapper is what the claim-check and contentStore()
  // use.
  std::function<std::shared_ptr<content::ContentStore>(std::shared_ptr<content::ContentStore>)>
      wrapContentStore;
  // Passed to the runtime (RuntimeOptions::onReplayEnd).
  std::function<void(const std::string& executionId)> onReplayEnd;
  // Passed to the runtime (RuntimeOptions::onRunEvent).
  std::function<void(const workflow::RunEvent&)> onRunEvent;
  // Passed to the runtime (RuntimeOptions::codeVersion): the code this app runs, recorded by
  // each run it starts and required of each run it continues (execution.versioning "pinned").
  // Empty: the program's build (workflow::programCodeVersion()); an agent app's host passes
  // the app's (agent_app::AgentApp::codeVersion).
  std::string codeVersion;
  // Passed to the runtime (RuntimeOptions::claimedLease): `loom worker`'s hand-over.
  std::optional<kernel::ClaimedLease> claimedLease;
  // Passed to the runtime (RuntimeOptions::leaseOwner): who this app's runs are held by; an
  // empty id: this process. Two apps of one process that must fence each other (the
  // simulator's runners) each get their own.
  kernel::LeaseOwner leaseOwner;
  // Wraps the log store as opened, below any sealing layer: what it forwards is what is
  // stored (the simulator injects its faults here). Its result is what the app uses.
  std::function<std::unique_ptr<kernel::EventStore>(std::unique_ptr<kernel::EventStore>)>
      wrapEventStore;
  // False when `tasks` is not the config's app's own registry: the loom command line booting
  // an app file's config only to read, export, erase or sweep what its runs recorded, with
  // none of its tools registered. execution.claimCheck.toolIds is then not checked against
  // `tasks` (the app's own boot checks it).
  bool tasksAreTheApps = true;
  // True: the PostgreSQL stores take `clock` for lease, touch and ledger times instead of the
  // server's (the simulator, whose one injected time must rule every store). Never for
  // processes on several machines: they share the server's clock.
  bool clockOnPostgres = false;
};

class App {
 public:
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  const Config& config() const { return *config_; }
  // The home folder (storage.home), which holds loom.db.
  const std::filesystem::path& home() const { return home_; }
  kernel::EventStore& store() { return *store_; }
  // Archives and deletes the ended executions older than options.afterDays into archiveStore()
  // (storage.retention; docs/spec/archive.md). It reads the stores under any sealing layer,
  // so segments hold ciphertext, never plaintext. Throws what sweep::runRetention throws.
  sweep::RetentionReport runRetention(const sweep::RetentionOptions& options);
  // Retires the damaged archive segment `name` once every run it holds is whole elsewhere
  // (sweep::supersedeSegment, over the stores as stored, like runRetention).
  // options.clock is the app's.
  sweep::SupersedeReport supersedeSegment(const std::string& name,
                                          const sweep::SupersedeOptions& options);
  // The archive the sweep, erasure and export read: every segment but the superseded ones.
  sweep::Archive readableArchive();
  // The per-subject key store (security.keys), nullptr when no option needs it.
  compliance::KeyStore* keys() { return keys_.get(); }
  // Who put which blob (security.keys set), for erasure; nullptr otherwise.
  compliance::BlobLedger* blobLedger() { return ledger_.get(); }
  // The default content store (storage.contentStore): claim-check blobs, what the sweep
  // reclaims. Shared, so a caller may hand it to sweepUnpinnedContent.
  const std::shared_ptr<content::ContentStore>& contentStore() const { return contentStore_; }
  // Snapshots of parked runs (in loom.db beside the logs): a resume reads the newest one plus
  // the events after it. They pin what they cite for the sweep.
  kernel::SnapshotStore& snapshots() { return *snapshots_; }
  // Where retention writes archive segments: <home>/archive, or the archive tables on
  // PostgreSQL with storage.url (every machine reads the same segments).
  const std::shared_ptr<sweep::ArchiveStore>& archiveStore() const { return archive_; }
  workflow::WorkflowRuntime& runtime() { return *runtime_; }
  // The clock the app was booted with (BootOptions::clock).
  const std::shared_ptr<const Clock>& clock() const { return clock_; }
  const effects::EffectChain& chain() const { return *chain_; }
  // The operator's stops; killing here is seen by this app's chain at once and by other
  // processes using the same home within a second.
  middleware::KillSwitchStore& killSwitch() { return *killSwitch_; }
  // Reports a warning through observability.onWarn (stderr when unset).
  void warn(std::string_view message) const;

 private:
  friend std::unique_ptr<App> boot(std::shared_ptr<const Config>, workflow::WorkflowRegistry&,
                                   effects::TaskRegistry&, BootOptions);
  friend struct AppAccess;  // boot's helpers (boot.cc)
  App() = default;

  // Declaration order is destruction order reversed: the runtime goes first.
  std::shared_ptr<const Config> config_;
  std::shared_ptr<const Clock> clock_;
  std::filesystem::path home_;
  std::unique_ptr<compliance::KeyStore> keys_;
  std::unique_ptr<compliance::BlobLedger> ledger_;
  std::unique_ptr<kernel::EventStore> rawStore_;  // under store_ when sealing
  std::unique_ptr<kernel::EventStore> store_;
  std::shared_ptr<content::ContentStore> rawContentStore_;  // under contentStore_ when sealed
  std::shared_ptr<content::ContentStore> contentStore_;
  std::unique_ptr<kernel::SnapshotStore> rawSnapshots_;  // under snapshots_ when sealing
  std::unique_ptr<kernel::SnapshotStore> snapshots_;
  std::shared_ptr<middleware::KillSwitchStore> killSwitch_;
  std::shared_ptr<sweep::ArchiveStore> archive_;
  std::shared_ptr<const effects::EffectChain> chain_;
  std::unique_ptr<workflow::WorkflowRuntime> runtime_;
};

// Composes the app. Throws ConfigValidationError when `config` is null or invalid as
// validateConfig(config, {&tasks}) decides (so an execution.claimCheck.toolIds entry must name
// a registered task that is not a model, unless options.tasksAreTheApps is false; nothing is
// created), ConfigError when a
// security.redact environment secret is too short (nothing is created),
// FailedPreconditionError when the home cannot be created, and what the stores throw when
// they cannot be opened (see sqlite_event_store.h, kill_switch_store.h).
// `workflows` and `tasks` must outlive the App; register every task before boot (registering
// after boot is not supported).
std::unique_ptr<App> boot(std::shared_ptr<const Config> config,
                          workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks,
                          BootOptions options = {});

}  // namespace loom::app
