#include "loom/workflow/runtime.h"

#include <mutex>
#include <utility>

#include "active_set.h"
#include "content/claim_check_envelope.h"
#include "ended_result.h"
#include "execution_context.h"
#include "lease_keeper.h"
#include "loom/util/error.h"
#include "loom/workflow/code_version.h"
#include "replay_snapshot.h"
#include "upgrade_run.h"
#include "util/worker_pool.h"

namespace loom::workflow {

using kernel::EventType;
using kernel::ExecutionStatus;

namespace {

// True when the log ends in this very park already (a resume that parks again where it was):
// nothing to append. A park with another wake time (a new retry's) is a new one.
bool sameParking(const ReplayLog& log, const ParkRequest& park) {
  if (log.lastType != EventType::kExecutionParked) return false;
  auto field = [&](std::string_view key) {
    const auto* v = log.lastParked.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  return field("reason") == park.reason && field("waitingFor") == park.waitingFor &&
         field("stepId") == park.stepId &&
         kernel::parkedWakeAt(log.lastParked) == park.wakeAtMillis;
}

// How one call runs an execution (start, resume, retry and their async forms).
struct Pass {
  // An executor's claim of the run: its lease is taken by breaking this token (resumeClaimed).
  std::optional<kernel::Lease> claim;
  bool retryNow = false;       // `loom retry`: a step whose retry is not due runs now
  bool inlineWait = true;      // it may wait out a short retry wait (not on the async pool)
  bool attemptFailed = false;  // set when this call ran an attempt that failed retryably
};

}  // namespace

class WorkflowRuntime::Impl {
 public:
  Impl(kernel::EventStore& store, const WorkflowRegistry& workflows,
       const effects::TaskRegistry& tasks, const effects::EffectChain& chain,
       RuntimeOptions options)
      : store_(store), workflows_(workflows), tasks_(tasks), chain_(chain),
        options_(std::move(options)),
        leases_(store, options_.leaseOwner.id.empty() ? kernel::processLeaseOwner()
                                                      : options_.leaseOwner,
                options_.leaseTtlMillis, [this](std::string_view m) { warn(options_, m); },
                options_.claimedLease) {
    if (options_.snapshotEveryEvents < 0) {
      throw InvalidArgumentError("snapshotEveryEvents is " +
                                 std::to_string(options_.snapshotEveryEvents) +
                                 "; it must be 0 (never) or a number of events");
    }
    validateDurableRetry(options_.retry);
  }

  // Runs `id` now although its durable retry is not due (`loom retry`). Throws
  // FailedPreconditionError when its last attempt did not fail retryably.
  RunResult retry(const std::string& id) {
    auto info = store_.info(id);
    if (!info) throw NotFoundError("no execution '" + id + "' (see `loom ls`)");
    auto park = kernel::currentPark(store_, *info);
    if (!park || !park->awaitsRetry()) {
      std::string state =
          park ? "parked (" + park->reason + ")" : std::string(kernel::statusName(info->status));
      throw FailedPreconditionError(
          "execution '" + id + "' is " + state +
          ", not retrying; `loom retry` runs again a step whose last attempt failed with a "
          "retryable error (see `loom ls`); to continue a run, use `loom resume " +
          id + "`");
    }
    Pass pass;
    pass.retryNow = true;
    pass.inlineWait = false;  // one attempt now; a failure parks it for its next attempt time
    return run(id, pass);
  }

  // Runs `id`; when this call ran an attempt that failed retryably and the wait for the next
  // one is short (execution.retry waitInlineUpToMs), waits and runs it here, unless a worker
  // takes the run first.
  RunResult run(const std::string& id, Pass pass = {}) {
    for (bool waited = false;; waited = true) {
      RunResult r;
      try {
        pass.attemptFailed = false;
        r = runRounds(id, pass);
      } catch (const kernel::LeaseHeldError&) {
        if (!waited) throw;
        return takenOver(id);
      }
      if (!waitForRetry(r, pass)) return r;
      pass.retryNow = false;
    }
  }

  // A worker took the run over while this process waited to retry it: it goes on there.
  static RunResult takenOver(const std::string& id) {
    RunResult r;
    r.id = id;
    r.status = ExecutionStatus::kRunning;
    return r;
  }

  // `r` parked "retrying" after an attempt this call ran, the wait short: waits under the lease
  // (`loom ls` shows this process; no worker starts it) until due or the log grows (a signal,
  // a cancel); true. False otherwise (a resume before the time, an async call).
  bool waitForRetry(const RunResult& r, const Pass& pass) {
    if (!pass.inlineWait || !pass.attemptFailed || r.status != ExecutionStatus::kParked ||
        r.parkReason != "retrying" || !r.wakeAtMillis) {
      return false;
    }
    int64_t wait = *r.wakeAtMillis - now();
    if (wait > options_.retry.waitInlineUpToMillis) return false;
    warn(options_, "execution '" + r.id + "': " + r.parkDetail + "; attempting again at " +
                       formatTimestamp(*r.wakeAtMillis) + " (execution.retry)");
    try {
      RunLease waiting(leases_, r.id);
      auto before = store_.info(r.id);
      constexpr int64_t kSlice = 250;  // how soon a cancel or signal is seen while waiting
      while ((wait = *r.wakeAtMillis - now()) > 0) {
        options_.clock->sleepMillis(std::min(wait, kSlice));
        auto info = store_.info(r.id);
        if (!info || !before || info->nextSeq != before->nextSeq) break;
      }
    } catch (const kernel::LeaseHeldError&) {  // taken first: run() finds it held, says so
    }
    return true;
  }

  RunResult runRounds(const std::string& id, Pass& pass) {
    std::optional<RunResult> parked;  // what this process did, if it goes on for a signal
    for (int round = 0;; ++round) {
      int64_t parkedAt = 0;
      RunResult r;
      try {
        r = runOnce(id, parkedAt, pass);
      } catch (const kernel::LeaseHeldError&) {
        if (!parked) throw;
        return *parked;  // the signal's sender took the run over first: it goes on there
      }
      pass.retryNow = false;  // a step that failed again in this round waits for its time
      if (!parkedWhileSignalled(r, id, parkedAt, round)) return r;
      parked = r;
    }
  }

  // One run of `id` under its lease; `parkedAt` is where its log ended when it stopped.
  RunResult runOnce(const std::string& id, int64_t& parkedAt, Pass& pass) {
    auto guard = active_.enter(id);
    std::optional<kernel::ExecutionInfo> info;
    if (!pass.claim) {  // an executor's claim is taken over whatever it finds (read below)
      info = store_.info(id);
      if (!info) throw NotFoundError("no execution '" + id + "' (see `loom ls`)");
      if (kernel::isEnded(info->status)) return endedResult(*info, store_);
    }
    // Before anything is read: a second runner stops here.
    RunLease lease(leases_, id, std::exchange(pass.claim, std::nullopt));
    info = store_.info(id);       // as it is now that nobody else can run it
    if (!info) throw NotFoundError("no execution '" + id + "' (see `loom ls`)");
    if (kernel::isEnded(info->status)) return endedResult(*info, store_);
    ReplayLog log = loadReplayLog(store_, options_, *info);
    // Pinned: a run continues only on the code it started on (one recorded without a version
    // predates versions and goes on).
    if (options_.versioning == Versioning::kPinned && !options_.codeVersion.empty() &&
        log.codeVersion && *log.codeVersion != options_.codeVersion) {
      throw VersionMismatchError(id, *log.codeVersion, options_.codeVersion);
    }
    const Workflow* wf = workflows_.find(log.workflow);
    if (wf == nullptr) {
      throw FailedPreconditionError("execution '" + id + "' runs workflow '" + log.workflow +
                                    "', which this program does not register");
    }
    try {
      return execute(*wf, id, log, lease.lease(), parkedAt, pass);
    } catch (const UnusableCheckpoint& unusable) {
      // Thrown between steps, nothing in flight, under the lease this runner still holds: what
      // the abandoned attempt recorded is in the log, and the whole log is the truth (as for an
      // unusable snapshot). Its replay starts without checkpoints, so it cannot end up here.
      warn(options_, unusable.reason + "; the whole log of execution '" + id +
                         "' is replayed instead");
      ReplayLog whole = ReplayLog::load(store_, id);
      RunResult r = execute(*wf, id, whole, lease.lease(), parkedAt, pass);
      r.effectsRun += unusable.effectsRun;  // run by the first attempt, replayed by this one
      r.replayedSteps -= unusable.effectsRun;
      return r;
    }
  }

  // True when `r` parked and something (a signal) was appended after the park, before the
  // lease was released: its sender found the lease held and left it to this runner, so the
  // run goes on (a few rounds at most; a busier log is left to the next resume).
  bool parkedWhileSignalled(const RunResult& r, const std::string& id, int64_t parkedAt,
                            int round) const {
    if (r.status != ExecutionStatus::kParked || round >= 3) return false;
    auto now = store_.info(id);
    return now && now->status == ExecutionStatus::kParked && now->nextSeq > parkedAt;
  }

  // Runs `wf` under `lease`. `parkedAt` gets where the log ended when the run stopped, or 0
  // when it parked although the signal it waits for is already in the log (absorbed while its
  // EXECUTION_PARKED was being appended): the run must go on. A loop that finds the checkpoint
  // of a snapshot unusable (UnusableCheckpoint) is rethrown for runOnce to replay the whole log.
  RunResult execute(const Workflow& wf, const std::string& id, ReplayLog& log,
                    const kernel::Lease& lease, int64_t& parkedAt, Pass& pass) {
    RunEnvironment env{store_, tasks_, chain_, options_, &lease, pass.retryNow};
    ExecutionContext ctx(env, id, log);
    bool fromCheckpoints = !log.checkpoints.empty();  // a snapshot's: UnusableCheckpoint rethrows
    RunResult r;
    r.id = id;
    try {
      r.output = ctx.runWorkflow(wf.fn);
      if (options_.journalFilter) r.output = options_.journalFilter(std::move(r.output));
      ctx.endReplay();
      ctx.append(kernel::executionCompleted(r.output, now()));
      r.status = ExecutionStatus::kCompleted;
    } catch (const ParkRequest& park) {
      if (!sameParking(log, park)) {
        ctx.append(kernel::executionParked(park.reason, park.waitingFor, park.stepId, now(),
                                           park.detail, park.wakeAtMillis));
      }
      if (writesSnapshots(options_)) writeSnapshot(options_, id, log);
      parkedAt = ctx.hasUnreadSignal(park.waitingFor) ? 0 : log.nextSeq;
      r.status = ExecutionStatus::kParked;
      r.parkReason = park.reason;
      r.parkDetail = park.detail;
      r.waitingFor = park.waitingFor;
      r.wakeAtMillis = park.wakeAtMillis;
      pass.attemptFailed = pass.attemptFailed || park.attemptFailed;
    } catch (const CancelRequest& cancel) {
      ctx.append(kernel::executionCancelled(cancel.reason, now()));
      r.status = ExecutionStatus::kCancelled;
      r.error = cancelledError(json::value(cancel.reason));
    } catch (UnusableCheckpoint& unusable) {
      if (!fromCheckpoints) {  // no checkpoint was read: a loop's bug, not a snapshot's
        fail(ctx, r, errorCodeName(ErrorCode::kInternal), unusable.reason);
      } else {
        unusable.effectsRun = ctx.effectsRun();
        throw;  // runOnce replays the whole log
      }
    } catch (const ConflictError&) {
      throw;  // another runner owns the log: record nothing
    } catch (const UnavailableError& e) {
      // A store this run needs is unreachable (a database restarting, a full disk): not the
      // workflow's failure. Nothing is recorded; the run stays resumable (a worker takes it
      // over). The error gets the run's name and the command that continues it, unless it is
      // one a caller acts on by its type (a lost blob says it already; a server's retry time).
      if (dynamic_cast<const ContentStoreUnavailableError*>(&e) != nullptr ||
          dynamic_cast<const RetryAfterError*>(&e) != nullptr) {
        throw;
      }
      throw UnavailableError(std::string(e.what()) + "; run '" + id +
                             "' stopped at the step it was on, not failed: `loom resume " + id +
                             "` continues it once that is fixed");
    } catch (const Error& e) {
      fail(ctx, r, errorCodeName(e.code()), e.what());
    } catch (const std::exception& e) {
      fail(ctx, r, errorCodeName(ErrorCode::kInternal), e.what());
    }
    r.replayedSteps = ctx.replayedSteps();
    r.effectsRun = ctx.effectsRun();
    return r;
  }

  RunResult start(std::string_view name, json::value input, const RunOptions& options,
                  bool inlineWait = true) {
    const Workflow& wf = admit(name, input, options);
    std::string id = options.id.empty() ? newExecutionId(*options_.clock) : options.id;
    int64_t parkedAt = 0;
    Pass pass;
    pass.inlineWait = inlineWait;
    RunResult r = startOnce(wf, id, std::move(input), options, parkedAt, pass);
    bool signalled = parkedWhileSignalled(r, id, parkedAt, 0);
    if (!signalled && !waitForRetry(r, pass)) return r;
    Pass next;
    next.inlineWait = inlineWait;
    try {
      return run(id, next);
    } catch (const kernel::LeaseHeldError&) {
      // The signal's sender took the run over first (it goes on there), or a worker did while
      // this process waited to retry.
      return signalled ? r : takenOver(id);
    }
  }

  // Records the execution without running it: status running, no lease (a worker runs it).
  RunResult submit(std::string_view name, json::value input, const RunOptions& options) {
    const Workflow& wf = admit(name, input, options);
    RunResult r;
    r.id = options.id.empty() ? newExecutionId(*options_.clock) : options.id;
    appendStarted(wf, r.id, std::move(input), options, now(), nullptr);
    return r;
  }

  // The workflow `name` names, with `input` admitted and filtered as it is journaled.
  const Workflow& admit(std::string_view name, json::value& input, const RunOptions& options) {
    const Workflow* wf = workflows_.find(name);
    if (wf == nullptr) {
      throw NotFoundError("no workflow '" + std::string(name) +
                          "' is registered (see `loom run --help` for the list)");
    }
    if (!options.id.empty()) validateExecutionId(options.id);
    content::admitFromOutside(input, "the input of workflow '" + std::string(name) + "'");
    if (options_.journalFilter) input = options_.journalFilter(std::move(input));
    return *wf;
  }

  void appendStarted(const Workflow& wf, const std::string& id, const json::value& input,
                     const RunOptions& options, int64_t startedAt, const kernel::Lease* lease) {
    try {
      kernel::Event started = kernel::executionStarted(wf.name, input, options.subject, startedAt);
      if (!options.configFile.empty()) started.data["configFile"] = options.configFile;
      if (!options_.codeVersion.empty()) started.data["codeVersion"] = options_.codeVersion;
      if (lease != nullptr) {
        store_.appendLeased(*lease, 1, {std::move(started)});
      } else {
        store_.append(id, 1, {std::move(started)});
      }
    } catch (const kernel::LeaseLostError&) {
      throw;
    } catch (const ConflictError&) {
      throw alreadyExists(id);
    }
  }

  static AlreadyExistsError alreadyExists(const std::string& id) {
    return AlreadyExistsError("execution '" + id +
                              "' already exists; to continue it run `loom "
                              "resume " +
                              id + "`");
  }

  RunResult startOnce(const Workflow& wf, const std::string& id, json::value input,
                      const RunOptions& options, int64_t& parkedAt, Pass& pass) {
    auto guard = active_.enter(id);
    int64_t startedAt = now();
    // The lease first, so no worker takes the new execution for an orphan before it runs.
    std::optional<RunLease> lease;
    try {
      lease.emplace(leases_, id);
    } catch (const kernel::LeaseHeldError& e) {
      if (!store_.info(id)) throw;
      throw AlreadyExistsError("execution '" + id + "' already exists and is being run by " +
                               kernel::describeHolder(e.held(), systemClock()->nowMillis()) +
                               "; pick another --id");
    }
    appendStarted(wf, id, input, options, startedAt, &lease->lease());
    ReplayLog log;
    log.workflow = wf.name;
    log.input = std::move(input);
    log.subject = options.subject;
    log.startedAtMillis = startedAt;
    if (!options_.codeVersion.empty()) log.codeVersion = options_.codeVersion;
    log.lastType = EventType::kExecutionStarted;
    log.nextSeq = 2;
    return execute(wf, id, log, lease->lease(), parkedAt, pass);
  }

  RunResult signal(const std::string& id, std::string_view name, json::value payload) {
    content::admitFromOutside(payload, "the payload of signal '" + std::string(name) + "'");
    if (options_.journalFilter) payload = options_.journalFilter(std::move(payload));
    for (int round = 0;; ++round) {
      auto info = store_.info(id);
      if (!info) throw NotFoundError("no execution '" + id + "' (see `loom ls`)");
      if (kernel::isEnded(info->status)) {
        throw FailedPreconditionError("execution '" + id + "' has ended (" +
                                      std::string(kernel::statusName(info->status)) +
                                      "); it takes no more signals");
      }
      try {
        store_.append(id, info->nextSeq, {kernel::signalReceived(name, payload, now())});
        break;
      } catch (const ConflictError&) {
        if (round >= 100) throw;  // a very busy log; the caller may retry
      }
    }
    try {
      return continueAfterSignal(id);
    } catch (const UnavailableError& e) {
      // The signal is in the log: not an error to retry (a retried call would send it twice).
      std::string m = "signal '" + std::string(name) + "' is recorded in execution '" + id +
                      "' (do not send it again), but continuing the run stopped: " + e.what();
      if (m.find("`loom resume") == std::string::npos) {
        m += "; `loom resume " + id + "` continues it once that is fixed";
      }
      throw FailedPreconditionError(m);
    }
  }

  RunResult continueAfterSignal(const std::string& id) {
    auto info = store_.info(id);
    // A parked run goes on here; so does one nobody runs any more (orphaned, submitted).
    bool nobodyRunsIt = info && info->status == ExecutionStatus::kRunning &&
                        kernel::isOrphaned(store_.currentLease(id),
                                           systemClock()->nowMillis());  // leases: wall time
    if (info && (info->status == ExecutionStatus::kParked || nobodyRunsIt)) {
      try {
        return run(id);
      } catch (const kernel::LeaseHeldError&) {
        // Its runner is still letting go of it after parking: it sees the signal and goes on.
      }
    }
    RunResult r;  // running elsewhere: that runner absorbs the signal
    r.id = id;
    r.status = info ? info->status : ExecutionStatus::kRunning;
    if (r.status == ExecutionStatus::kParked) r.status = ExecutionStatus::kRunning;
    return r;
  }

  // Ends a run that nobody runs (parked, orphaned, submitted) at once: EXECUTION_CANCELLED
  // under its lease. A run another runner holds gets the cancel signal instead, and stops at
  // its next step boundary (status running: it has not stopped yet).
  RunResult cancel(const std::string& id, const std::string& reason) {
    auto guard = active_.enter(id);
    RunResult r;
    r.id = id;
    try {
      RunLease lease(leases_, id);
      for (int round = 0;; ++round) {
        auto info = requireCancellable(id);
        try {
          store_.appendLeased(lease.lease(), info.nextSeq,
                              {kernel::executionCancelled(reason, now())});
          break;
        } catch (const kernel::LeaseLostError&) {
          throw;
        } catch (const ConflictError&) {
          if (round >= 100) throw;  // a signal landed meanwhile: look again
        }
      }
      r.status = ExecutionStatus::kCancelled;
      r.error = cancelledError(json::value(reason));
      return r;
    } catch (const kernel::LeaseHeldError&) {
      // Running elsewhere: its runner sees the signal at its next step boundary.
    }
    for (int round = 0;; ++round) {
      auto info = requireCancellable(id);
      try {
        store_.append(
            id, info.nextSeq,
            {kernel::signalReceived(kCancelSignal, json::object{{"reason", reason}}, now())});
        break;
      } catch (const ConflictError&) {
        if (round >= 100) throw;
      }
    }
    r.status = ExecutionStatus::kRunning;
    return r;
  }

  UpgradeResult upgrade(const std::string& id) {
    auto guard = active_.enter(id);
    RunLease lease(leases_, id);
    return upgradeLeased(store_, workflows_, tasks_, options_, lease.lease(), id);
  }

  kernel::ExecutionInfo requireCancellable(const std::string& id) const {
    auto info = store_.info(id);
    if (!info) throw NotFoundError("no execution '" + id + "' (see `loom ls`)");
    if (kernel::isEnded(info->status)) {
      throw FailedPreconditionError("execution '" + id + "' has ended (" +
                                    std::string(kernel::statusName(info->status)) +
                                    "); there is nothing to cancel");
    }
    return *info;
  }

  int64_t now() const { return options_.clock->nowMillis(); }

  void fail(ExecutionContext& ctx, RunResult& r, std::string_view code,
            std::string_view message) {
    ctx.append(kernel::executionFailed(code, message, now()));
    r.status = ExecutionStatus::kFailed;
    r.error = json::object{{"code", code}, {"message", message}};
  }

  WorkerPool& pool() {
    std::call_once(poolOnce_, [this] {
      unsigned n = options_.workers ? options_.workers : std::thread::hardware_concurrency();
      pool_ = std::make_unique<WorkerPool>(n ? n : 2);
    });
    return *pool_;
  }

  const RuntimeOptions& options() const { return options_; }

 private:
  kernel::EventStore& store_;
  const WorkflowRegistry& workflows_;
  const effects::TaskRegistry& tasks_;
  const effects::EffectChain& chain_;
  RuntimeOptions options_;
  ActiveSet active_;
  LeaseKeeper leases_;
  std::once_flag poolOnce_;
  std::unique_ptr<WorkerPool> pool_;  // created on first async use; destroyed first
};

WorkflowRuntime::WorkflowRuntime(kernel::EventStore& store, const WorkflowRegistry& workflows,
                                 const effects::TaskRegistry& tasks,
                                 std::shared_ptr<const effects::EffectChain> chain,
                                 RuntimeOptions options)
    : store_(store),
      chain_(chain ? std::move(chain) : std::make_shared<const effects::EffectChain>()),
      impl_(std::make_unique<Impl>(store, workflows, tasks, *chain_, std::move(options))) {}

WorkflowRuntime::~WorkflowRuntime() = default;

RunResult WorkflowRuntime::start(std::string_view name, json::value input,
                                 const RunOptions& options) {
  return impl_->start(name, std::move(input), options);
}

RunResult WorkflowRuntime::submit(std::string_view name, json::value input,
                                  const RunOptions& options) {
  return impl_->submit(name, std::move(input), options);
}

RunResult WorkflowRuntime::cancel(const std::string& executionId, const std::string& reason) {
  return impl_->cancel(executionId, reason);
}

UpgradeResult WorkflowRuntime::upgrade(const std::string& id) { return impl_->upgrade(id); }

const RuntimeOptions& WorkflowRuntime::options() const { return impl_->options(); }

RunResult WorkflowRuntime::resume(const std::string& executionId) {
  return impl_->run(executionId);
}

RunResult WorkflowRuntime::resumeClaimed(const kernel::Lease& claim) {
  Pass pass;
  pass.claim = claim;
  pass.inlineWait = false;  // an executor's thread never waits out a retry: it parks
  return impl_->run(claim.executionId, pass);
}

RunResult WorkflowRuntime::retry(const std::string& executionId) {
  return impl_->retry(executionId);
}

RunResult WorkflowRuntime::signal(const std::string& executionId, std::string_view name,
                                  json::value payload) {
  return impl_->signal(executionId, name, std::move(payload));
}

std::future<RunResult> WorkflowRuntime::startAsync(std::string name, json::value input,
                                                   RunOptions options) {
  auto promise = std::make_shared<std::promise<RunResult>>();
  auto future = promise->get_future();
  impl_->pool().post([this, promise, name = std::move(name), input = std::move(input),
                      options = std::move(options)]() mutable {
    try {
      // Never waits out a retry on the pool: the run is returned parked "retrying".
      promise->set_value(impl_->start(name, std::move(input), options, false));
    } catch (...) {
      promise->set_exception(std::current_exception());  // handed to the future's owner
    }
  });
  return future;
}

std::future<RunResult> WorkflowRuntime::resumeAsync(std::string executionId) {
  auto promise = std::make_shared<std::promise<RunResult>>();
  auto future = promise->get_future();
  impl_->pool().post([this, promise, id = std::move(executionId)] {
    try {
      Pass pass;
      pass.inlineWait = false;  // a pool thread never waits out a retry
      promise->set_value(impl_->run(id, pass));
    } catch (...) {
      promise->set_exception(std::current_exception());  // handed to the future's owner
    }
  });
  return future;
}

}  // namespace loom::workflow
