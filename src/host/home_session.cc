#include "host/home_session.h"

#include <sodium.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "app/home_record.h"
#include "compliance/sealing_event_store.h"
#include "loom/compliance/master_key.h"
#include "loom/kernel/forwarding_event_store.h"
#include "util/posix_file.h"
#include "util/private_files.h"

namespace loom::host {

void readDatabaseEnvironment(HomeOptions& options) {
  if (const char* url = std::getenv("LOOM_DATABASE_URL")) options.databaseUrl = url;
  if (const char* schema = std::getenv("LOOM_DATABASE_SCHEMA")) options.databaseSchema = schema;
}

// A CountingContentStore that owns the store it counts (boot hands it a shared_ptr).
class OwningCountingStore : public content::CountingContentStore {
 public:
  explicit OwningCountingStore(std::shared_ptr<content::ContentStore> inner)
      : CountingContentStore(*inner), inner_(std::move(inner)) {}

 private:
  std::shared_ptr<content::ContentStore> inner_;  // outlives the base's reference to it
};

// The home's log without keys to open sealed events: reading one is a SealedEventError that
// says how to give the keys; metadata (ls) stays readable.
class RefusingSealedStore : public kernel::ForwardingEventStore {
 public:
  RefusingSealedStore(kernel::EventStore& inner, std::string howToOpen)
      : ForwardingEventStore(inner), howToOpen_(std::move(howToOpen)) {}
  void scan(const std::string& id, int64_t fromSeq,
            const std::function<void(const kernel::Event&)>& visit) const override {
    ForwardingEventStore::scan(id, fromSeq, [&](const kernel::Event& e) {
      kernel::requireUnsealed(id, e, howToOpen_);
      visit(e);
    });
  }

 private:
  std::string howToOpen_;
};

namespace {

// Stops a scan after the first event (an execution's EXECUTION_STARTED).
struct FirstEventSeen {};

json::value memberOr(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr ? *v : json::value();
}

}  // namespace

// The data of execution `id`'s EXECUTION_STARTED (its input, configFile, ...).
json::object startedDataOf(const kernel::EventStore& store, const std::string& id) {
  json::object data;
  try {
    store.scan(id, 1, [&data](const kernel::Event& e) {
      data = e.data;
      throw FirstEventSeen{};
    });
  } catch (const FirstEventSeen&) {
    // the scan stops here on purpose: only the first event is needed
  }
  return data;
}

HomeSession::HomeSession(workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks,
                 std::ostream& out, std::shared_ptr<const app::Config> codeConfig)
    : workflows_(workflows), tasks_(tasks), out_(out), codeConfig_(std::move(codeConfig)) {
  agent_app::registerAgentAppSections();  // any --config file may hold an agent app
}

HomeSession::~HomeSession() = default;

std::unique_ptr<HomeSession> HomeSession::sibling(workflow::WorkflowRegistry* workflows,
                                          effects::TaskRegistry* tasks) const {
  auto session = std::make_unique<HomeSession>(workflows ? *workflows : workflows_,
                                           tasks ? *tasks : tasks_, out_, codeConfig_);
  session->options_ = options_;
  return session;
}

const app::Config* HomeSession::fileConfig() const {
  if (app_) return app_->config.get();
  if (config_) return config_.get();
  return codeConfig_.get();
}

app::StorageLocation HomeSession::location() const {
  const app::Config* file = fileConfig();
  app::StorageLocation where;
  if (file != nullptr) where = app::storageLocation(*file);
  if (options_.homeGiven || file == nullptr) where.home = options_.home;
  if (!options_.databaseUrl.empty()) {
    where.url = options_.databaseUrl;
    where.schema = "loom";
  }
  if (where.onPostgres() && !options_.databaseSchema.empty()) {
    where.schema = options_.databaseSchema;
  }
  where.durability = options_.durability;
  return where;
}

kernel::Durability HomeSession::durability() const {
  try {
    return kernel::durabilityFromName(options_.durability);
  } catch (const InvalidArgumentError& e) {
    throw UsageError(std::string("--durability: ") + e.what());
  }
}

void HomeSession::closeStores() {
  bootedReader_.reset();
  booted_.reset();
  counting_.reset();
  callsAtReplayEnd_.reset();
  killSwitch_.reset();
  archiveUnsealer_.reset();
  reader_.reset();
  keys_.reset();
  store_.reset();
}

void HomeSession::requireDatabase() const {
  app::StorageLocation where = location();
  if (where.onPostgres()) return;  // the stores refuse a schema that was never migrated
  std::filesystem::path db = where.database();
  if (!posix::pathExists(db)) {
    throw NotFoundError("no Loom home at '" + db.parent_path().string() +
                        "' (it holds no loom.db); pass --home DIR or set LOOM_HOME to the "
                        "folder `loom run` used");
  }
}

void HomeSession::loadConfig(const std::filesystem::path& file, bool runs) {
  config_ = app::loadConfigFile(file);
  configFile_ = std::filesystem::absolute(file).lexically_normal().string();
  configRuns_ = runs;
}

app::App& HomeSession::app(bool create) {
  runtime(create);
  return *booted_;
}

int64_t HomeSession::replayContentStoreCalls() const {
  if (callsAtReplayEnd_) return *callsAtReplayEnd_;
  return counting_ ? counting_->total() : 0;
}

kernel::EventStore& HomeSession::store(bool create) {
  if (booted_ && keysUnavailable_) {
    // Booted without the home's keys: a sealed event is refused, never handed on as if clear.
    if (!bootedReader_) {
      bootedReader_ = std::make_unique<RefusingSealedStore>(
          booted_->store(), *keysUnavailable_ + " (this home's master key comes from there); or "
                                                "pass --config FILE with [security.keys]");
    }
    return *bootedReader_;
  }
  if (booted_) return booted_->store();
  if (config_) return app(create).store();  // through its sealing layer, when it has one
  if (reader_) return *reader_;
  durability();  // a bad --durability is a usage error, before anything is opened
  app::StorageLocation where = location();
  if (create) {
    createPrivateDirectories(where.home);
  } else {
    requireDatabase();
  }
  store_ = app::openEventStore(where);
  openReader(where);
  return *reader_;
}

void HomeSession::openReader(const app::StorageLocation& where) {
  app::HomeRecord record = app::readHomeRecord(where);
  std::string how(kernel::kHowToOpenSealed);
  if (record.keys) {
    try {
      auto masterKey = compliance::loadMasterKey(*record.keys);
      try {
        keys_ =
            app::openKeyStore(where, masterKey, compliance::masterKeyOrigin(*record.keys), nullptr);
      } catch (...) {
        sodium_memzero(masterKey.data(), masterKey.size());
        throw;
      }
      sodium_memzero(masterKey.data(), masterKey.size());
      reader_ = std::make_unique<compliance::SealingEventStore>(
          *store_, *keys_, compliance::SealingOptions{.sealSubjectless = record.crypto});
      return;
    } catch (const ConfigError& e) {
      how = std::string(e.what()) +
            " (this home's master key comes from there); or pass "
            "--config FILE with [security.keys]";
    }
  }
  howToOpenSealed_ = how;
  reader_ = std::make_unique<RefusingSealedStore>(*store_, std::move(how));
}

kernel::Event HomeSession::openArchived(const std::string& executionId, const kernel::Event& event) {
  if (!archiveUnsealer_) {
    compliance::KeyStore* keys = nullptr;
    if (hasConfig()) keys = app(false).keys();
    if (keys == nullptr) {
      store(false);  // opens the home's recorded keys, when they load
      keys = keys_.get();
    }
    if (keys == nullptr) {
      kernel::requireUnsealed(executionId, event, howToOpenSealed_);
      return event;
    }
    archiveUnsealer_ = std::make_unique<compliance::EventUnsealer>(*keys);
  }
  return archiveUnsealer_->unseal(executionId, event);
}

workflow::WorkflowRuntime& HomeSession::runtime(bool create) {
  if (booted_) return booted_->runtime();
  durability();  // a bad --durability is a usage error, before anything is opened
  if (!create) requireDatabase();
  bool fromFile = app_ || config_ || codeConfig_;
  app::Config config = app_          ? *app_->config
                       : config_     ? *config_
                       : codeConfig_ ? *codeConfig_
                                     : app::Config{};
  if (options_.homeGiven || !fromFile) config.storage.home = options_.home;
  // LOOM_DATABASE_URL and LOOM_DATABASE_SCHEMA win, as --home does: boot opens the stores
  // location() names.
  if (app::StorageLocation where = location(); where.onPostgres()) {
    config.storage.url = where.url;
    config.storage.schema = where.schema;
  }
  // No file: the config the home's runs were made with, as far as the home recorded it (its
  // content store and keys), so a resume seals and offloads as the run did.
  if (!fromFile) {
    app::HomeRecord record = app::readHomeRecord(location());
    std::optional<std::string> needed =
        writesTo_
            ? whyKeysAreNeeded(record.crypto, record.contentStore && record.contentStore->sealed,
                               record.erase || record.keysUnknownHere.has_value())
            : std::nullopt;
    bool mayGoWithout = keysOptional_ || (writesTo_ && !needed);
    if (record.keysUnknownHere) {  // sealed runs, and no key here: never run without sealing
      if (!mayGoWithout) {
        throw FailedPreconditionError((needed ? *needed + ": " : std::string()) +
                                      *record.keysUnknownHere);
      }
      keysUnavailable_ = *record.keysUnknownHere;
    }
    if (record.keys && mayGoWithout) {  // else requireMasterKey below says why it is needed
      try {
        auto key = compliance::loadMasterKey(*record.keys);
        sodium_memzero(key.data(), key.size());
      } catch (const ConfigError& e) {
        keysUnavailable_ = e.what();  // boot without them: sealed events are refused on read
        record.keys.reset();
      }
    }
    app::applyHomeRecord(record, config);
  }
  if (fromFile && writesTo_ && writesTo_->subject) requireSealingAsRecorded(config);
  if (options_.durabilityGiven || !fromFile) {
    config.storage.eventStore.durability = options_.durability;
  }
  if (config.storage.eventStore.kind != "sqlite") {
    throw FailedPreconditionError(
        "storage.eventStore.kind = \"" + config.storage.eventStore.kind + "\" in " +
        (app_ ? app_->file.string() : std::string("the config file")) +
        ": the loom command line keeps executions in <home>/loom.db, so "
        "such a run could be neither listed nor resumed; remove the option");
  }
  reader_.reset();  // the booted app opens its own
  bootedReader_.reset();
  keys_.reset();
  store_.reset();
  app::BootOptions boot{.workers = 1};
  boot.claimedLease = options_.claimedLease;
  if (app_) boot.codeVersion = app_->codeVersion;
  // A --config file given to read its runs is booted without its tools registered here.
  boot.tasksAreTheApps = app_.has_value() || !config_ || configRuns_;
  boot.wrapContentStore = [this](std::shared_ptr<content::ContentStore> inner) {
    counting_ = std::make_shared<OwningCountingStore>(std::move(inner));
    return std::shared_ptr<content::ContentStore>(counting_);
  };
  boot.onReplayEnd = [this](const std::string&) {
    if (!callsAtReplayEnd_) callsAtReplayEnd_ = counting_->total();
  };
  boot.onRunEvent = options_.onRunEvent;
  requireMasterKey(config);
  booted_ = app::boot(app::defineConfig(std::move(config)), workflows_, tasks_, std::move(boot));
  return booted_->runtime();
}

const agent_app::AgentApp& HomeSession::loadApp(const std::filesystem::path& file) {
  app_.emplace(agent_app::loadAgentApp(file));
  agent_app::registerAgentApp(*app_, workflows_, tasks_);
  return *app_;
}

std::optional<std::string> HomeSession::whyKeysAreNeeded(bool crypto, bool sealedStore,
                                                     bool erase) const {
  if (crypto) return "this home seals every run (security.crypto)";
  if (sealedStore) return "this home's content store is sealed (storage.contentStore.sealed)";
  if (writesTo_->subject && erase) {
    return writesTo_->run + " is sealed under subject '" + *writesTo_->subject +
           "' (compliance.erase)";
  }
  return std::nullopt;
}

void HomeSession::requireSealingAsRecorded(const app::Config& config) const {
  app::HomeRecord record = app::readHomeRecord(location());
  if (!record.erase || config.compliance.erase) return;
  std::string source = app_ ? app_->file.string()
                            : !configFile_.empty() ? configFile_ : std::string("the program's Config");
  throw FailedPreconditionError(
      writesTo_->run + " has subject '" + *writesTo_->subject +
      "', and this home seals the runs of a subject (compliance.erase, recorded by its first "
      "sealed run), but " + source + " does not: its events would be written in clear, out of "
      "reach of `loom erase`. Add [compliance.erase] and the home's [security.keys] to it, or "
      "run without --subject");
}

void HomeSession::requireMasterKey(const app::Config& config) const {
  if (!config.security.keys || !writesTo_) return;
  try {
    auto key = compliance::loadMasterKey(*config.security.keys);
    sodium_memzero(key.data(), key.size());
  } catch (const ConfigError& e) {
    std::optional<std::string> why = whyKeysAreNeeded(
        config.security.crypto, config.storage.contentStore.sealed, config.compliance.erase);
    throw ConfigError(why.value_or("the config names a master key (security.keys)") +
                      ", so this command needs the master key: " + e.what());
  }
}

const agent_app::AgentApp* HomeSession::loadWhatExecutionRan(const std::string& executionId) {
  kernel::EventStore& events = store(false);
  auto info = events.info(executionId);
  if (!info) {
    throw NotFoundError("no execution '" + executionId + "' in " + location().describe() +
                        "; list the executions with `loom ls`");
  }
  setWritesTo("execution '" + executionId + "'", info->subject);
  json::object started = startedDataOf(events, executionId);
  std::string home = location().home.string();
  if (workflows_.find(info->workflow) != nullptr) {
    const auto* recorded = started.if_contains("configFile");
    if (config_ || recorded == nullptr) return nullptr;
    if (!recorded->is_string() || recorded->get_string().empty()) {
      // Loom records a path here; anything else is a changed row, never "no config".
      throw CorruptEventError(executionId, 1,
                              "its configFile is not a file path (" + json::toText(*recorded) +
                                  "); pass --config FILE with the config to continue it under");
    }
    std::string file(recorded->get_string());
    try {
      loadConfig(file, true);
    } catch (const ConfigError& e) {
      throw ConfigError("execution '" + executionId + "' was started with --config " + file +
                        ", which cannot be loaded now: " + e.what() +
                        "; fix that (or pass --config FILE with the config to continue it " +
                        "under), then run the command again");
    }
    options_.home = home;  // the execution lives in this home, whatever the file says
    options_.homeGiven = true;
    return nullptr;
  }
  std::optional<std::filesystem::path> file = agent_app::agentAppFileOf(memberOr(started, "input"));
  if (!file) return nullptr;  // the runtime says that the workflow is not registered
  try {
    loadApp(*file);
  } catch (const ConfigError& e) {
    throw ConfigError("execution '" + executionId + "' is a run of the agent app " +
                      file->string() + ", which cannot be loaded now: " + e.what() +
                      "; fix that, then run the command again");
  }
  // The execution lives in this home, whatever storage.home the app file says.
  options_.home = home;
  options_.homeGiven = true;
  if (app_->name != info->workflow) {
    throw FailedPreconditionError("execution '" + executionId + "' ran agent \"" + info->workflow +
                                  "\", but " + file->string() + " now defines agent \"" +
                                  app_->name + "\"; restore agent.name = \"" + info->workflow +
                                  "\" to continue it");
  }
  return &*app_;
}

middleware::KillSwitchStore& HomeSession::killSwitch() {
  if (killSwitch_) return *killSwitch_;
  requireDatabase();
  killSwitch_ = app::openKillSwitch(location(), nullptr);
  return *killSwitch_;
}

}  // namespace loom::host
