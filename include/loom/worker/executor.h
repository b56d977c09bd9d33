// The Executor runs what nobody runs, in this process (docs/operations.md, "Workers"): it
// claims runnable executions by lease (submitted, orphaned by a process that died, parked on a
// timer, a retry or an approval deadline that is due), runs each on a thread of its own
// through a RunLauncher, and reports how each run stopped. Runs of one home may be shared
// by any number of executors in any number of processes and machines: a claim is a lease,
// and a lease lets one runner at a time run an execution (docs/spec/leases.md).
//
// Wake-ups: a submission or a released run committed by any process wakes it (the store's
// awaitWork: at once in this process, within 5 ms across processes on SQLite, by LISTEN/NOTIFY
// on PostgreSQL); so does notify(); a due timer wakes it at its time. pollMillis bounds the
// wait for anything the store cannot announce (a lease that expired).
//
// Stopping: stop() ends the claiming; the runs in flight get the drain time to end, then their
// leases are released (an in-process run stops before its next step: its append is refused,
// nothing more is recorded) and the launcher is interrupted. Every run it did not finish is
// resumable at once by the next executor. A run holds a thread only while it runs: a parked run
// holds nothing here.
//
// Thread-safety: run(), runUntilIdle() or runPass() on one thread; stop(), notify() and active()
// from any.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "loom/kernel/event_store.h"
#include "loom/kernel/lease.h"
#include "loom/util/clock.h"
#include "loom/workflow/runtime.h"

namespace loom::worker {

// How one claimed run stopped, as its executor tells it (`loom worker` prints one line each).
struct RunReport {
  std::string executionId;
  std::string workflow;
  // "completed", "failed", "cancelled", "parked (timer until ...)", "taken by another
  // runner: ...", "stopped: ...", or why it could not start.
  std::string outcome;
  bool startFailed = false;  // it could not be run (its app did not load, ...): left as it was
  int64_t retryInMillis = 0;  // startFailed or stopped by an error: tried again after this
};

// What runs one claimed execution.
class RunLauncher {
 public:
  virtual ~RunLauncher() = default;
  // Runs the execution whose lease `claim` is, on the calling thread (one of the executor's),
  // and returns when it stops (ended, parked, taken over, stopped by the drain): how it
  // stopped when the launcher knows (a runtime's RunResult), else nullopt and the executor
  // reads it from the store. Throws when it could not be run (its app or config cannot be
  // loaded, the store failed): the run stays where it was and is tried again after a growing
  // delay (1 s to 60 s); the error's message is the report.
  virtual std::optional<workflow::RunResult> run(const kernel::Lease& claim,
                                                 const kernel::ExecutionInfo& info) = 0;
  // The drain time passed with runs still running: stage 1 asks them to stop (the executor
  // has released their leases), stage 2 (2 s later) insists. The default does nothing: an
  // in-process run stops at its next append. A launcher of child processes signals them.
  virtual void interrupt(int stage) { (void)stage; }
  // True when a normal return of run() means the run took its claim over (a runtime's
  // resumeClaimed did), so the executor need not look whether to give it back.
  virtual bool takesOverClaims() const { return false; }
};

// Runs each claimed execution in this process, on the runtime `runtimeFor` returns for it
// (WorkflowRuntime::resumeClaimed). A workflow that throws fails its own run only.
class InProcessLauncher : public RunLauncher {
 public:
  explicit InProcessLauncher(
      std::function<workflow::WorkflowRuntime&(const kernel::ExecutionInfo&)> runtimeFor)
      : runtimeFor_(std::move(runtimeFor)) {}
  std::optional<workflow::RunResult> run(const kernel::Lease& claim,
                                         const kernel::ExecutionInfo& info) override;
  bool takesOverClaims() const override { return true; }

 private:
  std::function<workflow::WorkflowRuntime&(const kernel::ExecutionInfo&)> runtimeFor_;
};

struct ExecutorOptions {
  // Runs at once (each holds one thread while it runs). Must be >= 1.
  std::size_t concurrency = 16;
  // At most this many runs at once of the named workflows; others are bounded by concurrency.
  std::map<std::string, std::size_t, std::less<>> perWorkflow;
  // The longest wait without news before looking again (leases that expired are not news).
  int64_t pollMillis = 500;
  // How long a claim holds before its run's runner takes it over.
  int64_t claimTtlMillis = 15'000;
  // The clock timers and approval deadlines are due by (the runtime's).
  std::shared_ptr<const Clock> clock = systemClock();
  // Who holds the claims; an empty id: this process (kernel::processLeaseOwner).
  kernel::LeaseOwner owner;
  // Claim only the runs that recorded this code version or none (the runtime's
  // RuntimeOptions::codeVersion, when every run here is of one code); nullopt: claim any, and
  // leave a run of another version as it was once claimed (docs/adr/0029).
  std::optional<std::string> codeVersion;
  // Told of each run when it stops (from the run's thread; calls are serialized).
  std::function<void(const RunReport&)> onRun;
  // Told what fails no run (the store could not be read now: retried).
  std::function<void(std::string_view)> onWarn;
};

// What runUntilIdle did.
struct IdleTally {
  int64_t runs = 0;         // runs it claimed and ran
  int64_t startFailed = 0;  // runs that could not be started (left as they were)
  bool storeFailed = false; // the runnable executions could not be listed
};

class Executor {
 public:
  // `store` and `launcher` must outlive the executor. Throws InvalidArgumentError when
  // concurrency or pollMillis is not positive.
  Executor(kernel::EventStore& store, RunLauncher& launcher, ExecutorOptions options);
  // Stops (no drain) and waits for the runs' threads.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Claims and runs until stop() and the drain that follows.
  void run();
  // Runs what is runnable now, waits for it, and returns once nothing is runnable or running
  // (`loom worker --once`). A run that could not start is not tried again here.
  IdleTally runUntilIdle();
  // One deterministic pass, for a caller that schedules everything on one thread (the
  // simulator): claims what is runnable now (up to concurrency; every kind of runnable run
  // looked for, no backoff) and runs each on the calling thread, one after another. Returns
  // how many it ran. Not with run() or runUntilIdle() at the same time.
  std::size_t runPass();
  // Ends run(): no more claims; the runs in flight get `drain` to end, then are stopped (see
  // above). Returns at once. Not async-signal-safe: a signal handler sets a flag a thread
  // reads.
  void stop(std::chrono::milliseconds drain);
  // Wakes the executor now: this process made something runnable.
  void notify();
  // Runs in flight now.
  std::size_t active() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::worker
