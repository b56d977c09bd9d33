// The apps a `loom worker` runs in its own process (worker::InProcessLauncher's side in the
// command line): each run is run by the app it recorded — the agent app file in its input, the
// --config file in its first event, or else this program's own workflows — booted once per
// distinct app and config and kept while runs use it. An app no run uses is closed after
// kIdleClose (when a run of any app ends next), and at most kMaxIdleApps stay booted (the one idle longest is closed first). An app that cannot be loaded (a file that
// is gone, an environment variable that is not set) leaves the run where it was: the error
// names the run, the file and what is missing.
// Thread-safety: run() from any number of the executor's threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "host/home_session.h"
#include "loom/worker/executor.h"

namespace loom::host {

class RecordedApps : public worker::RunLauncher {
 public:
  static constexpr std::size_t kMaxIdleApps = 8;
  // An app no run used for this long is closed (its stores, connections, MCP servers).
  static constexpr std::chrono::seconds kIdleClose{60};

  // `main` is the worker's own session (its global options and the program's registries);
  // `store` reads the home's logs. Both must outlive this.
  RecordedApps(HomeSession& main, kernel::EventStore& store) : main_(main), store_(store) {}
  ~RecordedApps() override;

  std::optional<workflow::RunResult> run(const kernel::Lease& claim,
                                         const kernel::ExecutionInfo& info) override;
  bool takesOverClaims() const override { return true; }

 private:
  struct Booted;
  // The app execution `id` recorded, as a cache key: "" (this program's), "config:<file>"
  // or "app:<file>".
  // A configFile that is not a path is a CorruptEventError (never "no config").
  std::string appOf(const kernel::ExecutionInfo& info) const;
  std::shared_ptr<Booted> acquire(const std::string& key, const std::string& id);
  void giveBack(const std::string& key, const std::shared_ptr<Booted>& app);
  static bool stale(const Booted& app);

  HomeSession& main_;
  kernel::EventStore& store_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Booted>> apps_;  // GUARDED_BY(mu_)
  // GUARDED_BY(mu_): the apps no run uses, idle longest first, with when they went idle
  std::list<std::pair<std::string, std::chrono::steady_clock::time_point>> idle_;
};

}  // namespace loom::host
