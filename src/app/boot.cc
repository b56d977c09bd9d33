#include "loom/app/app.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/middleware/kill_switch.h"
#include "loom/middleware/redaction.h"

namespace loom::app {
namespace {

using Layers = std::vector<std::shared_ptr<effects::Middleware>>;

// The claim-check slot (ADR 0140 D5): just inside the kill switch and OUTSIDE redaction and
// every effectMiddleware entry, so what it stores is already scrubbed and user middleware
// sees real results. execution.claimCheck (the claim-check work) adds its middleware here;
// until then the option is refused at validation and this adds nothing (D1: unset changes
// nothing).
void addClaimCheckLayer(const Config& /*config*/, Layers& /*layers*/) {}

std::filesystem::path createHome(const std::string& home) {
  std::filesystem::path path(home);
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    throw FailedPreconditionError("cannot create the home folder " + path.string() +
                                  " (storage.home): " + ec.message() +
                                  "; choose a writable folder");
  }
  return path;
}

std::unique_ptr<kernel::EventStore> openEventStore(const Config& config,
                                                   const std::filesystem::path& home) {
  if (config.storage.eventStore.kind == "memory") {
    return std::make_unique<kernel::MemoryEventStore>();
  }
  kernel::SqliteEventStoreOptions options;
  options.path = (home / "loom.db").string();
  options.durability = kernel::durabilityFromName(config.storage.eventStore.durability);
  return std::make_unique<kernel::SqliteEventStore>(std::move(options));
}

}  // namespace

App::~App() = default;

void App::warn(std::string_view message) const {
  middleware::warn(config_->observability.onWarn, message);
}

std::unique_ptr<App> boot(std::shared_ptr<const Config> config,
                          workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks,
                          BootOptions options) {
  // 1. Validate (a Config frozen without defineConfig is checked too). Nothing exists yet.
  if (!config) throw ConfigValidationError("boot", {{"", "expected a config, got null"}});
  if (ConfigIssues issues = validateConfig(*config); !issues.empty()) {
    throw ConfigValidationError("boot", std::move(issues));
  }
  if (!options.clock) options.clock = systemClock();

  // 2. Build what needs no storage: redaction reads its environment secrets here.
  std::shared_ptr<middleware::RedactionMiddleware> redaction;
  if (!config->security.redact.empty()) {
    redaction = std::make_shared<middleware::RedactionMiddleware>(config->security.redact,
                                                                  config->observability.onWarn);
  }

  // 3. Create the home and open the stores.
  auto app = std::unique_ptr<App>(new App());
  app->config_ = config;
  app->home_ = createHome(config->storage.home);
  app->store_ = openEventStore(*config, app->home_);
  middleware::KillSwitchOptions killOptions;
  killOptions.path = (app->home_ / "loom.db").string();
  killOptions.clock = options.clock;
  app->killSwitch_ = std::make_shared<middleware::KillSwitchStore>(std::move(killOptions));

  // 4. The chain, once, outermost first.
  Layers layers;
  layers.push_back(std::make_shared<middleware::KillSwitchMiddleware>(app->killSwitch_));
  addClaimCheckLayer(*config, layers);
  if (redaction) layers.push_back(redaction);
  for (const auto& m : config->execution.effectMiddleware) layers.push_back(m);
  app->chain_ = std::make_shared<const effects::EffectChain>(std::move(layers));

  // 5. The runtime; journaled inputs are scrubbed like results.
  workflow::RuntimeOptions runtimeOptions;
  runtimeOptions.clock = options.clock;
  runtimeOptions.workers = options.workers;
  if (redaction) {
    runtimeOptions.journalInputFilter = [redaction](json::value input) {
      return redaction->redact(std::move(input));
    };
  }
  app->runtime_ = std::make_unique<workflow::WorkflowRuntime>(
      *app->store_, workflows, tasks, app->chain_, std::move(runtimeOptions));
  return app;
}

}  // namespace loom::app
