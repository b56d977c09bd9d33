#include "host/recorded_apps.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "loom/agent_app/agent_app.h"

namespace loom::host {

// One booted app: its own session (and registries, for an agent app file), kept while runs
// use it.
struct RecordedApps::Booted {
  std::mutex bootMu;  // one run boots it; the others wait for it
  std::unique_ptr<workflow::WorkflowRegistry> workflows;  // an agent app's own
  std::unique_ptr<effects::TaskRegistry> tasks;
  std::unique_ptr<HomeSession> session;
  workflow::WorkflowRuntime* runtime = nullptr;  // set once booted
  int users = 0;                                 // GUARDED_BY(RecordedApps::mu_)
};

RecordedApps::~RecordedApps() = default;

std::string RecordedApps::appOf(const kernel::ExecutionInfo& info) const {
  json::object started = startedDataOf(store_, info.id);
  if (main_.workflows().find(info.workflow) != nullptr) {
    const auto* file = started.if_contains("configFile");
    if (file == nullptr) return std::string();
    if (!file->is_string() || file->get_string().empty()) {
      // Loom records a path here; anything else is a changed row, never "no config" (as
      // HomeSession::loadWhatExecutionRan refuses it).
      throw CorruptEventError(info.id, 1,
                              "its configFile is not a file path (" + json::toText(*file) +
                                  "); `loom resume " + info.id +
                                  " --config FILE` continues it under the config you name");
    }
    return "config:" + std::string(file->get_string());
  }
  const auto* input = started.if_contains("input");
  auto app = agent_app::agentAppFileOf(input != nullptr ? *input : json::value());
  return app ? "app:" + app->string() : std::string();
}

std::optional<workflow::RunResult> RecordedApps::run(const kernel::Lease& claim,
                                                     const kernel::ExecutionInfo& info) {
  const std::string key = appOf(info);
  std::shared_ptr<Booted> app = acquire(key, claim.executionId);
  try {
    workflow::RunResult result = app->runtime->resumeClaimed(claim);
    giveBack(key, app);
    return result;
  } catch (...) {
    giveBack(key, app);
    throw;
  }
}

// A booted agent app whose files changed on disk since (ADR 0029): kept no more, so no run
// continues on a mix of the loaded app (its model script) and the files now there.
bool RecordedApps::stale(const Booted& app) {
  const agent_app::AgentApp* loaded = app.session ? app.session->agentApp() : nullptr;
  return loaded != nullptr && agent_app::changedOnDisk(*loaded);
}

std::shared_ptr<RecordedApps::Booted> RecordedApps::acquire(const std::string& key,
                                                            const std::string& id) {
  std::shared_ptr<Booted> app;
  {
    std::lock_guard lock(mu_);
    auto& slot = apps_[key];
    if (!slot) slot = std::make_shared<Booted>();
    app = slot;
    ++app->users;
    idle_.remove_if([&](const auto& entry) { return entry.first == key; });
  }
  std::unique_lock boot(app->bootMu);
  if (app->runtime != nullptr && !stale(*app)) return app;
  if (app->runtime != nullptr) {  // edited since it booted: a fresh one for this key
    boot.unlock();
    {
      std::lock_guard lock(mu_);
      auto& slot = apps_[key];
      if (slot == app) slot = std::make_shared<Booted>();
      --app->users;  // the old one closes when its last run gives it back
      app = slot;
      ++app->users;
    }
    boot = std::unique_lock(app->bootMu);
    if (app->runtime != nullptr) return app;
  }
  try {
    if (key.starts_with("app:")) {
      app->workflows = std::make_unique<workflow::WorkflowRegistry>();
      app->tasks = std::make_unique<effects::TaskRegistry>();
    }
    app->session = main_.sibling(app->workflows.get(), app->tasks.get());
    app->session->loadWhatExecutionRan(id);
    app->runtime = &app->session->runtime(false);
  } catch (...) {
    app->session.reset();  // not kept: the next run of this app boots it again
    giveBack(key, app);
    throw;
  }
  return app;
}

void RecordedApps::giveBack(const std::string& key, const std::shared_ptr<Booted>& app) {
  std::vector<std::shared_ptr<Booted>> closingAll;  // closed after the lock is released
  std::unique_lock lock(mu_);
  --app->users;
  auto it = apps_.find(key);
  // A replaced one (stale) is no longer the key's: it closes with its last reference.
  if (it == apps_.end() || it->second != app || app->users > 0) return;
  if (it->second->runtime == nullptr) {  // it did not boot
    apps_.erase(it);
    return;
  }
  auto now = std::chrono::steady_clock::now();
  idle_.emplace_back(key, now);
  while (!idle_.empty() &&
         (idle_.size() > kMaxIdleApps || now - idle_.front().second >= kIdleClose)) {
    auto oldest = apps_.find(idle_.front().first);
    idle_.pop_front();
    closingAll.push_back(std::move(oldest->second));
    apps_.erase(oldest);
  }
}

}  // namespace loom::host
