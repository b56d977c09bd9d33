// The WorkflowRuntime runs registered workflows as durable executions over an EventStore:
// start appends EXECUTION_STARTED and runs the workflow; every step's output is appended
// (and durable, as the store is configured) before the workflow sees it; a run that parks or
// whose process dies is continued by resume, which replays the log and runs only what was
// not recorded. A crash re-runs at most the one step that was in flight.
//
// Thread-safety: all methods are thread-safe. One execution runs on one thread at a time in
// this process (a second concurrent run of the same id is refused with FailedPrecondition).
// Across processes, leases (docs/spec/leases.md): a run holds its execution's lease, renewed
// in the background, and every append is fenced by it; a second runner is refused with
// kernel::LeaseHeldError (naming the holder) before it reads or runs anything, and a runner
// whose lease was taken over records nothing more (kernel::LeaseLostError). The async
// methods run on a worker pool.
//
// Snapshots (docs/spec/snapshots.md): with a SnapshotStore, resume reads the newest snapshot
// of the execution plus only the events after it; a snapshot that cannot be used is reported
// through onWarn and the whole log is read instead (a bad snapshot never loses a run). With
// snapshotEveryEvents > 0 the runtime also writes them: when a run parks, and when the log
// has grown by that many events since the last one (checked after each append).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "loom/effects/middleware.h"
#include "loom/effects/task.h"
#include "loom/json/json.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/snapshot_store.h"
#include "loom/kernel/usage.h"
#include "loom/util/clock.h"
#include "loom/workflow/fork.h"
#include "loom/workflow/retry_policy.h"
#include "loom/workflow/upgrade.h"
#include "loom/workflow/workflow.h"

namespace loom::workflow {

enum class Versioning { kPinned, kLatest };

// What a run does as it does it (docs/observability.md), for progress lines and subscribers
// in this process: a step this runner starts or finishes (a replayed one is neither), a park,
// an end.
struct RunEvent {
  enum class Kind { kStepStarted, kStepFinished, kParked, kEnded };
  Kind kind = Kind::kStepStarted;
  std::string executionId;
  std::string stepId;    // a step's; a park's step (may be empty)
  std::string effectId;  // a step's tool or model; a park's reason; an end's status
  std::string taskKind;  // a step's: "tool", "llm", "flow", ...
  int64_t durationMillis = 0;              // kStepFinished
  std::optional<kernel::TokenUsage> usage;  // kStepFinished of a model step that reported some
};

struct RuntimeOptions {
  std::shared_ptr<const Clock> clock = systemClock();
  // Worker threads for the *Async methods; 0 = hardware concurrency.
  unsigned workers = 0;
  // Applied to every value before it is journaled (secret redaction plugs in here): effect
  // inputs, the run's input (EXECUTION_STARTED; the workflow then sees the filtered input, as
  // a replay will), its output (EXECUTION_COMPLETED) and signal payloads. Effect outputs are
  // filtered by the chain (the redaction layer).
  std::function<json::value(json::value)> journalFilter;
  // Journal each effect's input beside its output (STEP_COMPLETED.input).
  bool journalEffectInputs = true;
  // Where snapshots of replay state are read from (and written to, see below); must outlive
  // the runtime. nullptr: every resume reads the whole log.
  kernel::SnapshotStore* snapshots = nullptr;
  // Write a snapshot when a run parks and whenever the log has grown by this many events
  // since the last one. 0 = never write (existing snapshots are still read). Must be >= 0.
  int64_t snapshotEveryEvents = 0;
  // Where the runtime reports what fails nothing (a snapshot ignored or not written). May be
  // called from any thread. Empty: "loom: warning: ..." on stderr.
  std::function<void(std::string_view)> onWarn;
  // Called once per run when it stops replaying recorded steps (it reached an unrecorded
  // step, a park, or its end), with the execution id: `loom resume --json` counts the
  // content-store calls made before it (replayContentStoreCalls).
  std::function<void(const std::string& executionId)> onReplayEnd;
  // Replay check (replay_check.h): no step runs. A step the code asks for must be the one
  // the log recorded under its id (the same effect); a step the log does not hold, or a
  // recorded attempt that would run again, ends the check there; ending or parking with a
  // recorded step never asked for is a divergence. For checkReplay's in-memory copies only.
  bool replayCheck = false;
  // execution.versioning: kPinned refuses to continue a run recorded on another code version
  // (VersionMismatchError); kLatest continues it on this code, checking the replay as a
  // replay check does until the run's first new step, and parks it "diverged" at the first
  // recorded step the code does not ask for (or asks for as another effect).
  Versioning versioning = Versioning::kPinned;
  // How long a run's lease holds without a heartbeat (renewed every third of it): after its
  // process dies, another runner may take the execution over once this has passed (at once
  // when that process ran on this host and is gone). Must be > 0.
  int64_t leaseTtlMillis = 15'000;
  // Who this runtime's runs are held by; an empty id: this process (kernel::processLeaseOwner).
  kernel::LeaseOwner leaseOwner;
  // A lease the worker that started this process claimed for it (`loom worker`): taking that
  // execution's lease breaks the claim while it is held by that worker (this process's parent).
  std::optional<kernel::ClaimedLease> claimedLease;
  // Durable retries of retryable effect failures (execution.retry, retry_policy.h); validated
  // by the constructor.
  DurableRetry retry;
  // The code this runtime runs (code_version.h): recorded in each new run's EXECUTION_STARTED
  // as "codeVersion". A run that recorded another is refused before it replays anything
  // (VersionMismatchError; execution.versioning "pinned"). Empty: nothing recorded or checked
  // (app::boot sets the program's build unless told otherwise).
  std::string codeVersion;
  // observability.prices, by model id (a model step's effect id): a model step that reports
  // usage records its cost at this price (STEP_COMPLETED "usage".costUsd; none without one).
  std::map<std::string, kernel::ModelPrice> prices;
  // Told each RunEvent, on the runner's threads (several at once in a batch of tool calls):
  // must be quick and thread-safe; what it throws is ignored. Empty: nobody is told.
  std::function<void(const RunEvent&)> onRunEvent;
};

struct RunOptions {
  std::string id;  // empty: a fresh unique id
  std::optional<std::string> subject;
  // The config file the run was started with (an absolute path), recorded in its
  // EXECUTION_STARTED as "configFile" so `loom resume`/`loom signal` boot with it again
  // (docs/spec/events.md); empty: none is recorded.
  std::string configFile;
};

struct RunResult {
  std::string id;
  kernel::ExecutionStatus status = kernel::ExecutionStatus::kRunning;
  json::value output;      // completed: the workflow's output
  json::value
      error;  // failed: {code, message}; cancelled: {"code": "cancelled", "message": reason}
  std::string waitingFor;  // parked: the signal it waits for
  std::string parkReason;  // parked: "signal", "effectStopped", "approval", "retrying", ...
  std::string parkDetail;  // parked by an error (retrying): what failed
  // parked on a timer or an approval deadline: when it is due; retrying: the next attempt
  std::optional<int64_t> wakeAtMillis;
  int64_t replayedSteps = 0;  // recorded steps returned from the log by this call
  int64_t effectsRun = 0;     // steps actually executed by this call
};

class WorkflowRuntime {
 public:
  // The store, registries and chain must outlive the runtime. Throws InvalidArgumentError
  // when options.snapshotEveryEvents is negative.
  WorkflowRuntime(kernel::EventStore& store, const WorkflowRegistry& workflows,
                  const effects::TaskRegistry& tasks,
                  std::shared_ptr<const effects::EffectChain> chain, RuntimeOptions options = {});
  ~WorkflowRuntime();

  // Starts workflow `name`. Throws NotFoundError for an unknown workflow and
  // AlreadyExistsError when options.id names an existing execution (use resume).
  RunResult start(std::string_view name, json::value input, const RunOptions& options = {});

  // Records execution `name` with `input` (EXECUTION_STARTED) without running anything: it
  // stays running with no lease, for `loom worker` (or a resume) to run. Same refusals as
  // start. Returns status running, nothing run.
  RunResult submit(std::string_view name, json::value input, const RunOptions& options = {});

  // Continues an execution from its log. An ended execution returns its recorded result and
  // runs nothing. Throws NotFoundError for an unknown id, kernel::LeaseHeldError when another
  // runner holds its lease.
  RunResult resume(const std::string& executionId);

  // Continues an execution whose lease `claim` an executor of this process took for it
  // (worker::Executor): the run takes its lease over by the claim's token, so no other runner
  // can start it in between. Never waits out a retry: a step that failed retryably parks the
  // run "retrying" until its next attempt. Throws as resume; kernel::LeaseHeldError when
  // another runner took the execution since the claim (it expired first).
  RunResult resumeClaimed(const kernel::Lease& claim);

  // `loom retry`: resumes an execution parked "retrying" (a step's last attempt failed with a
  // retryable error, execution.retry) and runs that step now, not at its next attempt time.
  // resume() of such a run before that time parks it again. Throws NotFoundError, or
  // FailedPreconditionError when the execution is not retrying.
  RunResult retry(const std::string& executionId);

  // Records signal `name` with `payload` for the execution, then resumes it if it is parked
  // (when another runner holds it, that runner absorbs the signal: status running).
  // Throws FailedPreconditionError when the execution has ended.
  RunResult signal(const std::string& executionId, std::string_view name, json::value payload);

  // Cancels an execution (`loom cancel`): one nobody runs (parked, orphaned, submitted) ends
  // at once, status cancelled (EXECUTION_CANCELLED with `reason`); one another runner holds is
  // sent the cancel signal (kCancelSignal) and that runner stops at its next step boundary
  // (returned status: running). Throws NotFoundError, or FailedPreconditionError when it has
  // ended.
  RunResult cancel(const std::string& executionId, const std::string& reason);

  // `loom fork` (fork.h): records a new run whose log is `sourceId`'s up to the point options
  // name, started on this runtime's code version, then continues it here (a worker that takes
  // it first runs it instead: status running). The source is left as it was. Throws
  // NotFoundError for an unknown source or step, AlreadyExistsError for an id in use, and what
  // forkedLog throws (an erased source is refused).
  RunResult fork(const std::string& sourceId, const ForkOptions& options);
  // `loom rerun`: a fork of failed run `failedId` at its failed step (rerunPoint), with id
  // `newId` (empty: a fresh one). Throws as fork; FailedPreconditionError when it did not fail.
  RunResult rerun(const std::string& failedId, const std::string& newId);
  // `loom upgrade` (upgrade.h): moves run `executionId` to this runtime's code version when
  // its log replays on this code, under its lease; runs nothing. Throws NotFoundError,
  // kernel::LeaseHeldError (it is running elsewhere), and FailedPreconditionError when it has
  // ended, this runtime declares no version, or its log does not replay here (naming the step).
  UpgradeResult upgrade(const std::string& executionId);

  std::future<RunResult> startAsync(std::string name, json::value input, RunOptions options);
  std::future<RunResult> resumeAsync(std::string executionId);

  kernel::EventStore& store() { return store_; }
  const effects::EffectChain& chain() const { return *chain_; }

 private:
  const RuntimeOptions& options() const;
  // fork() of `sourceId` whose whole log is `source` (read once by fork and rerun).
  RunResult forkOf(const std::string& sourceId, const std::vector<kernel::Event>& source,
                   const ForkOptions& options);

  class Impl;
  kernel::EventStore& store_;
  std::shared_ptr<const effects::EffectChain> chain_;
  std::unique_ptr<Impl> impl_;
};

// The signal `loom cancel` records for a run another process is running (payload
// {"reason"}): that runner stops at its next step boundary and records EXECUTION_CANCELLED.
// Names starting with "loom:" are reserved for Loom.
inline constexpr std::string_view kCancelSignal = "loom:cancel";

// A fresh execution id: 26 characters, sortable by creation time, unique across processes.
std::string newExecutionId(const Clock& clock);

inline constexpr std::size_t kMaxExecutionIdBytes = 128;
// Throws InvalidArgumentError naming the rule when `id` cannot be an execution id: empty,
// longer than kMaxExecutionIdBytes, starting with '-' (a command line could not address it),
// or holding a control character (a terminal would print it raw).
void validateExecutionId(std::string_view id);

}  // namespace loom::workflow
