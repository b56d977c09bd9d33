#include <sodium.h>

#include "compliance/encrypting_content_store.h"
#include "compliance/sealing_event_store.h"
#include "compliance/sealing_snapshot_store.h"
#include "home_record.h"
#include "loom/app/app.h"
#include "loom/compliance/blob_ledger.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/memory_snapshot_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/middleware/claim_check/claim_check_config.h"
#include "loom/middleware/kill_switch.h"
#include "loom/middleware/redaction.h"
#include "loom/workflow/code_version.h"
#include "storage_location.h"
#include "util/private_files.h"

namespace loom::app {
namespace {

// A master key beside the data it protects protects nothing: a copy or backup of the home
// carries both (docs/compliance.md). Refused before it is read.
void requireKeyFileOutsideHome(const Config& config) {
  if (!config.security.keys->file || !config.storage.url.empty()) return;
  std::error_code ec;
  std::filesystem::path file = std::filesystem::weakly_canonical(*config.security.keys->file, ec);
  if (ec) return;  // loadMasterKey names what is wrong with it
  std::filesystem::path home = std::filesystem::weakly_canonical(config.storage.home, ec);
  if (ec) return;
  std::filesystem::path relative = file.lexically_relative(home);
  if (relative.empty() || *relative.begin() == "..") return;
  throw ConfigError("security.keys.file: " + *config.security.keys->file +
                    " lies inside the home " + config.storage.home +
                    ": a copy or backup of the home would carry the key that unseals it, and "
                    "erasing a subject would not make their data unreadable there. Move the "
                    "key out of the home (e.g. /etc/loom/master.key, mode 600) and point "
                    "security.keys.file at it, or use security.keys.env");
}

using Layers = std::vector<std::shared_ptr<effects::Middleware>>;

// The claim-check slot (ADR 0140 D5): just inside the kill switch and OUTSIDE redaction and
// every effectMiddleware entry, so what it stores is already scrubbed and user middleware
// sees real results. Unset adds nothing (D1).
void addClaimCheckLayer(const Config& config, const std::shared_ptr<content::ContentStore>& store,
                        const effects::TaskRegistry& tasks, Layers& layers) {
  if (!config.execution.claimCheck) return;
  middleware::ClaimCheckConfig cc = *config.execution.claimCheck;
  if (!cc.store) cc.store = store;
  auto onWarn = config.observability.onWarn;
  layers.push_back(middleware::claimCheckMiddleware(middleware::claimCheckOptionsFor(
      cc, tasks, [onWarn](std::string_view m) { middleware::warn(onWarn, m); })));
}

// The execution.effectMiddleware entries, in order; one on the app's own content store is
// bound to this App's store (an entry is shared by every App of the config).
void addEffectMiddleware(const Config& config,
                         const std::shared_ptr<content::ContentStore>& store, Layers& layers) {
  auto onWarn = config.observability.onWarn;
  for (const auto& m : config.execution.effectMiddleware) {
    if (const auto* recipe = dynamic_cast<const middleware::AppStoreClaimCheck*>(m.get())) {
      layers.push_back(
          recipe->bind(store, [onWarn](std::string_view w) { middleware::warn(onWarn, w); }));
    } else {
      layers.push_back(m);
    }
  }
}

std::filesystem::path createHome(const std::string& home) {
  std::filesystem::path path(home);
  try {
    createPrivateDirectories(path);  // 0700: it holds subjects' data
  } catch (const FailedPreconditionError& e) {
    throw FailedPreconditionError(std::string(e.what()) + " (storage.home)");
  }
  return path;
}

// Where `config` keeps its stores, with the time PostgreSQL's take (BootOptions::clockOnPostgres).
StorageLocation locationOf(const Config& config, const BootOptions& options) {
  StorageLocation where = storageLocation(config);
  if (options.clockOnPostgres) where.postgresClock = options.clock;
  return where;
}

// The event and snapshot stores: in the process (eventStore.kind "memory") or at the home's
// location (loom.db, or PostgreSQL with storage.url).
// Returns the writer the home's SQLite log lends the blobs packed in its file (ADR 0017).
std::shared_ptr<sqlite::BorrowedWriter> openLogStores(
    const Config& config, const BootOptions& options, std::unique_ptr<kernel::EventStore>& events,
    std::unique_ptr<kernel::SnapshotStore>& snapshots) {
  std::shared_ptr<sqlite::BorrowedWriter> logWriter;
  if (config.storage.eventStore.kind == "memory") {
    events = std::make_unique<kernel::MemoryEventStore>();
    snapshots = std::make_unique<kernel::MemorySnapshotStore>();
  } else {
    StorageLocation where = locationOf(config, options);
    events = openEventStore(where, options.clock);
    snapshots = openSnapshotStore(where);
    if (auto* log = dynamic_cast<kernel::SqliteEventStore*>(events.get())) {
      logWriter = log->lendWriter();
    }
  }
  if (options.wrapEventStore) events = options.wrapEventStore(std::move(events));
  return logWriter;
}

// A master key that is wiped when boot is done with it.
struct MasterKey {
  explicit MasterKey(const std::array<uint8_t, 32>& k) : bytes(k) {}
  ~MasterKey() { sodium_memzero(bytes.data(), bytes.size()); }
  std::array<uint8_t, 32> bytes;
};

}  // namespace

// Boot's access to the App it composes.
struct AppAccess {
  // security.keys, compliance.erase, security.crypto and storage.contentStore.sealed: the key
  // store in loom.db (a wrong master key is a ConfigError here), the sealing layers over the
  // event and snapshot stores, the EncryptingContentStore over the content store.
  static void openCompliance(const Config& config, const StorageLocation& where,
                             const MasterKey& masterKey, std::shared_ptr<const Clock> clock,
                             App& app);
};

void AppAccess::openCompliance(const Config& config, const StorageLocation& where,
                               const MasterKey& masterKey, std::shared_ptr<const Clock> clock,
                               App& app) {
  app.keys_ = openKeyStore(where, masterKey.bytes,
                           compliance::masterKeyOrigin(*config.security.keys), clock);
  if (config.compliance.erase || config.security.crypto) {
    compliance::SealingOptions sealing{.sealSubjectless = config.security.crypto};
    app.rawStore_ = std::move(app.store_);
    app.store_ =
        std::make_unique<compliance::SealingEventStore>(*app.rawStore_, *app.keys_, sealing);
    app.rawSnapshots_ = std::move(app.snapshots_);
    app.snapshots_ =
        std::make_unique<compliance::SealingSnapshotStore>(*app.rawSnapshots_, *app.keys_, sealing);
  }
  if (config.storage.contentStore.sealed) {
    app.rawContentStore_ = app.contentStore_;
    app.contentStore_ =
        std::make_shared<compliance::EncryptingContentStore>(*app.rawContentStore_, *app.keys_);
  }
  // Who put which blob, for erasure (blob_ledger.h).
  app.ledger_ = openBlobLedger(where);
  app.contentStore_ =
      std::make_shared<compliance::LedgeredContentStore>(app.contentStore_, *app.ledger_);
}

App::~App() = default;

sweep::RetentionReport App::runRetention(const sweep::RetentionOptions& options) {
  kernel::EventStore& events = rawStore_ ? *rawStore_ : *store_;
  kernel::SnapshotStore& snapshots = rawSnapshots_ ? *rawSnapshots_ : *snapshots_;
  return sweep::runRetention(events, &snapshots, archive_, options);
}

sweep::SupersedeReport App::supersedeSegment(const std::string& name,
                                             const sweep::SupersedeOptions& options) {
  kernel::EventStore& events = rawStore_ ? *rawStore_ : *store_;
  sweep::SupersedeOptions withClock = options;
  withClock.clock = clock_;
  return sweep::supersedeSegment(events, archive_, name, withClock);
}

sweep::Archive App::readableArchive() { return sweep::readableArchive(archive_, *store_); }

void App::warn(std::string_view message) const {
  middleware::warn(config_->observability.onWarn, message);
}

std::unique_ptr<App> boot(std::shared_ptr<const Config> config,
                          workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks,
                          BootOptions options) {
  // 1. Validate (a Config frozen without defineConfig is checked too), with what only the
  // registry can tell (execution.claimCheck.toolIds). Nothing exists yet.
  if (!config) throw ConfigValidationError("boot", {{"", "expected a config, got null"}});
  middleware::KnownTasks known{options.tasksAreTheApps ? &tasks : nullptr};
  if (ConfigIssues issues = validateConfig(*config, known); !issues.empty()) {
    throw ConfigValidationError("boot", std::move(issues));
  }
  if (!options.clock) options.clock = systemClock();

  // 2. Build what needs no storage: redaction reads its environment secrets here.
  std::shared_ptr<middleware::RedactionMiddleware> redaction;
  if (!config->security.redact.empty()) {
    redaction = std::make_shared<middleware::RedactionMiddleware>(config->security.redact,
                                                                  config->observability.onWarn);
  }

  markSecretVariables(*config);  // before any tool or MCP server can be started
  // The master key is read before anything exists: a missing one stops boot here.
  std::optional<MasterKey> masterKey;
  if (config->security.keys) {
    requireKeyFileOutsideHome(*config);
    masterKey.emplace(compliance::loadMasterKey(*config->security.keys));
  }

  // 3. Create the home and open the stores.
  auto app = std::unique_ptr<App>(new App());
  app->config_ = config;
  app->clock_ = options.clock;
  app->home_ = createHome(config->storage.home);
  auto logWriter = openLogStores(*config, options, app->store_, app->snapshots_);
  recordHome(*config);  // refuses another content store than the runs used
  StorageLocation where = locationOf(*config, options);
  app->contentStore_ =
      openContentStore(*config, options.clock, where.postgresClock, std::move(logWriter));
  if (masterKey) {
    AppAccess::openCompliance(*config, where, *masterKey, options.clock, *app);
    recordKeys(*config);  // only once the key opened the home's keys
  }
  if (options.wrapContentStore) app->contentStore_ = options.wrapContentStore(app->contentStore_);
  app->killSwitch_ = openKillSwitch(where, options.clock);
  app->archive_ = openArchiveStore(where);

  // 4. The chain, once, outermost first.
  Layers layers;
  layers.push_back(std::make_shared<middleware::KillSwitchMiddleware>(app->killSwitch_));
  addClaimCheckLayer(*config, app->contentStore_, tasks, layers);
  if (redaction) layers.push_back(redaction);
  addEffectMiddleware(*config, app->contentStore_, layers);
  app->chain_ = std::make_shared<const effects::EffectChain>(std::move(layers));

  // 5. The runtime; journaled inputs are scrubbed like results.
  workflow::RuntimeOptions runtimeOptions;
  runtimeOptions.clock = options.clock;
  runtimeOptions.workers = options.workers;
  runtimeOptions.retry = config->execution.retry;
  runtimeOptions.leaseTtlMillis = config->execution.leaseTtlMillis;
  runtimeOptions.prices = config->observability.prices;
  runtimeOptions.snapshots = app->snapshots_.get();
  runtimeOptions.snapshotEveryEvents = config->execution.snapshotEveryEvents;
  runtimeOptions.onReplayEnd = options.onReplayEnd;
  runtimeOptions.onRunEvent = options.onRunEvent;
  runtimeOptions.claimedLease = options.claimedLease;
  // What the config declares, else what the host passes (an agent app's digest), else the build.
  runtimeOptions.codeVersion = !config->execution.codeVersion.empty() ? config->execution.codeVersion
                               : !options.codeVersion.empty()        ? options.codeVersion
                                                                     : workflow::programCodeVersion();
  runtimeOptions.versioning = config->execution.versioning == "latest"
                                  ? workflow::Versioning::kLatest
                                  : workflow::Versioning::kPinned;
  runtimeOptions.leaseOwner = options.leaseOwner;
  auto onWarn = config->observability.onWarn;
  runtimeOptions.onWarn = [onWarn](std::string_view m) { middleware::warn(onWarn, m); };
  if (redaction) {
    runtimeOptions.journalFilter = [redaction](json::value input) {
      return redaction->redact(std::move(input));
    };
  }
  app->runtime_ = std::make_unique<workflow::WorkflowRuntime>(
      *app->store_, workflows, tasks, app->chain_, std::move(runtimeOptions));
  return app;
}

}  // namespace loom::app
