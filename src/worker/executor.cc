#include "loom/worker/executor.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <list>
#include <mutex>
#include <set>
#include <thread>

#include "loom/util/error.h"
#include "loom/workflow/code_version.h"
#include "presence.h"
#include "run_outcome.h"
#include "runnable.h"

namespace loom::worker {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::optional<workflow::RunResult> InProcessLauncher::run(const kernel::Lease& claim,
                                                          const kernel::ExecutionInfo& info) {
  return runtimeFor_(info).resumeClaimed(claim);
}

class Executor::Impl {
 public:
  Impl(kernel::EventStore& store, RunLauncher& launcher, ExecutorOptions options)
      : store_(store), launcher_(launcher), options_(std::move(options)),
        owner_(options_.owner.id.empty() ? kernel::processLeaseOwner() : options_.owner),
        finder_(store, owner_, options_.claimTtlMillis, options_.clock, options_.pollMillis,
                options_.codeVersion),
        presence_(store, owner_, options_.codeVersion, options_.pollMillis,
                  [this](const std::string& m) { warn(m); }) {
    if (options_.concurrency == 0 || options_.pollMillis <= 0 || options_.claimTtlMillis <= 0) {
      throw InvalidArgumentError(
          "an executor needs concurrency >= 1, pollMillis > 0 and claimTtlMillis > 0");
    }
  }

  ~Impl() {
    stop(milliseconds(0));
    joinAll();
  }

  IdleTally loop(bool once) {
    IdleTally tally;
    once_ = once;
    int failedLooks = 0;
    while (!stopping()) {
      presence_.sayIfDue();
      std::vector<kernel::Lease> claimed;
      try {
        claimed = finder_.claim(freeSlots(), skipped());
        failedLooks = 0;
      } catch (const std::exception& e) {
        ++failedLooks;
        warn(std::string("cannot list the runnable executions") +
             (once ? "" : " (retried in " + std::to_string(std::min(failedLooks, 30)) + " s)") +
             ": " + e.what());
        if (once) {
          tally.storeFailed = true;
          break;
        }
        waitForNews(milliseconds(1000 * std::min(failedLooks, 30)));
        continue;
      }
      for (auto& claim : claimed) admit(std::move(claim), once, tally);
      if (once && claimed.empty() && active() == 0) break;
      if (!claimed.empty()) continue;  // more may be runnable: look again before waiting
      waitForNews(untilNextLook());
    }
    drain();
    presence_.goodbye();
    std::lock_guard lock(mu_);
    tally.startFailed = startFailed_;
    return tally;
  }

  std::size_t runPass() {
    std::vector<kernel::Lease> claimed = finder_.claim(options_.concurrency, {}, true);
    for (const auto& claim : claimed) {
      auto info = store_.info(claim.executionId);
      if (!info || kernel::isEnded(info->status)) {
        release(claim);
        continue;
      }
      {
        std::lock_guard lock(mu_);
        running_.emplace(claim.executionId, info->workflow);
      }
      runOne(claim, *info);
    }
    std::lock_guard lock(mu_);
    backoff_.clear();  // a pass keeps no time-based state: the same calls make the same choices
    return claimed.size();
  }

  void stop(milliseconds drain) {
    {
      std::lock_guard lock(mu_);
      if (!stopping_) drainUntil_ = Clock::now() + drain;
      stopping_ = true;
    }
    cv_.notify_all();
  }

  void notify() {
    {
      std::lock_guard lock(mu_);
      notified_ = true;
    }
    cv_.notify_all();
  }

  std::size_t active() const {
    std::lock_guard lock(mu_);
    return running_.size();
  }

 private:
  struct Backoff {
    int64_t delayMillis = 0;
    Clock::time_point until;
  };
  struct RunThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  bool stopping() const {
    std::lock_guard lock(mu_);
    return stopping_;
  }

  std::size_t freeSlots() const {
    std::lock_guard lock(mu_);
    return options_.concurrency - std::min(options_.concurrency, running_.size());
  }

  // Running here, backing off, or waiting for a slot of its workflow: not claimed again now.
  std::vector<std::string> skipped() {
    std::lock_guard lock(mu_);
    std::vector<std::string> ids;
    auto now = Clock::now();
    for (const auto& [id, workflow] : running_) ids.push_back(id);
    for (const auto& [id, b] : backoff_) {
      if (b.until > now) ids.push_back(id);
    }
    ids.insert(ids.end(), capped_.begin(), capped_.end());
    if (once_) ids.insert(ids.end(), triedOnce_.begin(), triedOnce_.end());
    return ids;
  }

  // Starts the claimed run, unless it ended meanwhile, its workflow has no free slot, or
  // the executor is stopping: then the claim goes back.
  void admit(kernel::Lease claim, bool once, IdleTally& tally) {
    std::optional<kernel::ExecutionInfo> info;
    try {
      info = store_.info(claim.executionId);
    } catch (const std::exception& e) {
      warn("cannot read execution '" + claim.executionId + "': " + e.what());
    }
    std::unique_lock lock(mu_);
    bool start = info && !kernel::isEnded(info->status) && !stopping_ &&
                 !(once && triedOnce_.contains(claim.executionId));
    if (start && !workflowHasSlot(info->workflow)) {
      capped_.insert(claim.executionId);
      start = false;
    }
    if (!start) {
      lock.unlock();
      release(claim);
      return;
    }
    triedOnce_.insert(claim.executionId);
    running_.emplace(claim.executionId, info->workflow);
    ++tally.runs;
    reapThreads();
    auto done = std::make_shared<std::atomic<bool>>(false);
    threads_.push_back({std::thread([this, done, claim, info = *info] {
                          runOne(claim, info);
                          done->store(true);
                        }),
                        done});
  }

  bool workflowHasSlot(const std::string& workflow) const {  // REQUIRES(mu_)
    auto cap = options_.perWorkflow.find(workflow);
    if (cap == options_.perWorkflow.end()) return true;
    auto n = std::count_if(running_.begin(), running_.end(),
                           [&](const auto& r) { return r.second == workflow; });
    return static_cast<std::size_t>(n) < cap->second;
  }

  void runOne(const kernel::Lease& claim, const kernel::ExecutionInfo& info) {
    RunReport report{claim.executionId, info.workflow, "", false, 0};
    std::string error;
    bool returned = false;
    std::optional<workflow::RunResult> result;
    std::optional<workflow::VersionMismatchError> foreign;
    try {
      result = launcher_.run(claim, info);
      returned = true;
    } catch (const kernel::LeaseHeldError&) {
      // Another runner took it after the claim expired: it goes on there.
    } catch (const workflow::VersionMismatchError& e) {
      foreign.emplace(e);  // nothing ran: a worker of the run's own code takes it
      error = e.what();
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "an unknown error";
    }
    if (!returned || !launcher_.takesOverClaims()) releaseIfStillClaimed(claim);
    settle(report, info, result, error);
    if (foreign) {
      leaveToItsVersion(report, *foreign);
      presence_.left(foreign->recorded(), foreign->current());
    } else if (returned) {
      presence_.ran(info.codeVersion);
    }
    std::lock_guard lock(mu_);
    running_.erase(claim.executionId);
    capped_.clear();  // a slot came free: the runs waiting for one may be claimed again
    slotFreed_ = true;
    if (report.retryInMillis > 0) {
      Backoff& b = backoff_[claim.executionId];
      b.delayMillis = foreign ? kForeignLookMillis
                      : b.delayMillis == 0 ? 1000
                                           : std::min<int64_t>(b.delayMillis * 2, 60'000);
      b.until = Clock::now() + milliseconds(b.delayMillis);
      report.retryInMillis = b.delayMillis;
      if (report.startFailed) ++startFailed_;
    } else {
      backoff_.erase(claim.executionId);
    }
    bool told = foreign && !toldForeign_.insert(claim.executionId).second;
    if (options_.onRun && !told) options_.onRun(report);
    cv_.notify_all();
  }

  // A run of other code (pinned, ADR 0029): not a failure of this worker. It is looked at again
  // only every kForeignLookMillis (its files may be put back) and reported once.
  static constexpr int64_t kForeignLookMillis = 60'000;
  static void leaveToItsVersion(RunReport& report, const workflow::VersionMismatchError& e) {
    report.outcome = "left for a worker of its code version " + e.recorded() +
                     " (this worker runs " + e.current() + "); nothing ran";
    report.startFailed = false;
    report.retryInMillis = kForeignLookMillis;
  }

  // Fills in how the run stands now: from `result` when the launcher returned how the run
  // stopped, else read from the store; `error`: what the launcher threw, if anything.
  void settle(RunReport& report, const kernel::ExecutionInfo& before,
              const std::optional<workflow::RunResult>& result, const std::string& error) {
    if (result && result->status != kernel::ExecutionStatus::kRunning) {
      report.outcome = describeStop(result->status, result->parkReason, result->wakeAtMillis);
      return;
    }
    std::optional<std::string> outcome;
    std::optional<kernel::ExecutionInfo> after;
    try {
      outcome = settledOutcome(store_, report.executionId);
      if (!outcome) after = store_.info(report.executionId);  // did it record anything?
    } catch (const std::exception& e) {
      outcome = std::nullopt;
      if (error.empty()) report.outcome = std::string("cannot be read back: ") + e.what();
    }
    if (outcome) {
      report.outcome = *outcome;
      return;
    }
    if (draining()) {
      report.outcome = "stopped by the drain (resumable)";
      return;
    }
    bool untouched = after && after->nextSeq == before.nextSeq;
    report.startFailed = !error.empty() && untouched;
    report.outcome = (report.startFailed ? "could not start: " : "did not finish: ") +
                     (error.empty() ? std::string("no message") : error);
    report.retryInMillis = 1;  // set to the backoff by the caller
  }

  bool draining() const {
    std::lock_guard lock(mu_);
    return stopping_;
  }

  // The claim goes back when its run never took it over (the launcher failed before).
  void releaseIfStillClaimed(const kernel::Lease& claim) {
    try {
      auto current = store_.currentLease(claim.executionId);
      if (current && !current->released && current->token == claim.token) release(claim);
    } catch (const std::exception&) {
      // It expires in claimTtlMillis.
    }
  }

  void release(const kernel::Lease& lease) {
    try {
      store_.releaseLease(lease);
    } catch (const std::exception& e) {
      warn("could not release the lease of " + lease.executionId + " (it expires in " +
           std::to_string(options_.claimTtlMillis / 1000) + " s): " + e.what());
    }
  }

  // How long to wait for news before looking again: the poll, or less when a timer is due.
  milliseconds untilNextLook() const {
    int64_t wait = options_.pollMillis;
    if (auto due = finder_.nextDue()) {
      wait = std::clamp<int64_t>(*due - options_.clock->nowMillis(), 0, wait);
    }
    return milliseconds(wait);
  }

  // Waits up to `pause` for news: the store's (EventStore::awaitWork), notify(), a slot that
  // came free, or stop().
  void waitForNews(milliseconds pause) {
    const auto until = Clock::now() + pause;
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (stopping_ || std::exchange(notified_, false) || std::exchange(slotFreed_, false)) {
          return;
        }
      }
      auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
      if (left <= 0) return;
      try {
        if (store_.awaitWork(std::min<int64_t>(left, 5))) return;
      } catch (const std::exception&) {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, milliseconds(std::min<int64_t>(left, 20)));
      }
    }
  }

  // Waits for the runs up to the drain deadline; then releases their leases (an in-process
  // run stops at its next append) and interrupts the launcher, twice, 2 s apart.
  void drain() {
    std::unique_lock lock(mu_);
    if (!stopping_) return;  // runUntilIdle: nothing runs
    cv_.wait_until(lock, drainUntil_, [this] { return running_.empty(); });
    for (int stage = 1; stage <= 2 && !running_.empty(); ++stage) {
      std::vector<std::string> ids;
      for (const auto& [id, workflow] : running_) ids.push_back(id);
      lock.unlock();
      if (stage == 1) {
        for (const auto& id : ids) releaseOurs(id);
      }
      launcher_.interrupt(stage);
      lock.lock();
      cv_.wait_for(lock, std::chrono::seconds(2), [this] { return running_.empty(); });
    }
  }

  // Releases the lease a runner of this process holds on `id`.
  void releaseOurs(const std::string& id) {
    try {
      auto lease = store_.currentLease(id);
      if (lease && !lease->released &&
          (lease->owner.id == owner_.id ||
           (lease->owner.pid == ::getpid() && lease->owner.host == owner_.host))) {
        release(*lease);
      }
    } catch (const std::exception& e) {
      warn("could not stop the run of " + id + ": " + e.what());
    }
  }

  void reapThreads() {  // REQUIRES(mu_)
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void joinAll() {
    std::list<RunThread> threads;
    {
      std::lock_guard lock(mu_);
      threads.swap(threads_);
    }
    for (auto& t : threads) t.thread.join();
  }

  void warn(const std::string& message) {
    if (options_.onWarn) {
      options_.onWarn(message);
    } else {
      std::fprintf(stderr, "loom: warning: %s\n", message.c_str());
    }
  }

  kernel::EventStore& store_;
  RunLauncher& launcher_;
  const ExecutorOptions options_;
  const kernel::LeaseOwner owner_;
  RunnableFinder finder_;  // the claiming thread's
  Presence presence_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> running_;  // GUARDED_BY(mu_): id -> workflow
  std::map<std::string, Backoff> backoff_;      // GUARDED_BY(mu_)
  std::set<std::string> capped_;                // GUARDED_BY(mu_): no slot of its workflow
  std::set<std::string> triedOnce_;             // GUARDED_BY(mu_): runUntilIdle runs each once
  std::set<std::string> toldForeign_;           // GUARDED_BY(mu_): runs of other code, reported
  std::list<RunThread> threads_;                // GUARDED_BY(mu_)
  int64_t startFailed_ = 0;                     // GUARDED_BY(mu_)
  bool stopping_ = false;                       // GUARDED_BY(mu_)
  bool notified_ = false;                       // GUARDED_BY(mu_)
  bool slotFreed_ = false;                      // GUARDED_BY(mu_)
  bool once_ = false;                           // set before the loop starts
  Clock::time_point drainUntil_;                // GUARDED_BY(mu_)
};

Executor::Executor(kernel::EventStore& store, RunLauncher& launcher, ExecutorOptions options)
    : impl_(std::make_unique<Impl>(store, launcher, std::move(options))) {}
Executor::~Executor() = default;
void Executor::run() { impl_->loop(false); }
IdleTally Executor::runUntilIdle() { return impl_->loop(true); }
void Executor::stop(std::chrono::milliseconds drain) { impl_->stop(drain); }
void Executor::notify() { impl_->notify(); }
std::size_t Executor::active() const { return impl_->active(); }
std::size_t Executor::runPass() { return impl_->runPass(); }

}  // namespace loom::worker
