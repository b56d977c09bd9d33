// Workflows: C++ functions registered by name that ask their context for journaled steps.
// Workflow code must be deterministic given the values its steps return (it is re-run from
// the top on every resume; recorded steps return their recorded values instead of running).
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/json/json.h"
#include "loom/json/shared_array.h"
#include "loom/kernel/event.h"
#include "loom/kernel/usage.h"
#include "loom/util/error.h"
#include "loom/util/function_ref.h"

namespace loom::workflow {

// What a workflow sees of its execution. One context per run of the workflow function; not
// thread-safe (one execution runs on one thread at a time).
class WorkflowContext {
 public:
  virtual ~WorkflowContext() = default;

  virtual const std::string& executionId() const = 0;
  virtual const std::optional<std::string>& subject() const = 0;
  virtual const json::value& input() const = 0;

  // A journaled step (task kind "flow", effect id = step id). When the log holds the step's
  // STEP_COMPLETED, returns the recorded output without calling `fn`. Otherwise runs `fn`
  // through the middleware chain and appends its output before returning it. A step whose
  // recorded failure is final rethrows it (StepFailedError). Using a step id twice in one run
  // throws DuplicateStepError.
  virtual json::value step(std::string_view stepId, FunctionRef<json::value()> fn) = 0;

  // A journaled call of the registered effect `effectId` with `input`, as step() does; the
  // EffectContext carries the task's kind. Throws NotFoundError for an unknown effect id.
  json::value effect(std::string_view stepId, std::string_view effectId, json::value input) {
    return effect(stepId, effectId, std::move(input), EffectOptions{});
  }
  struct EffectOptions {
    // Journal this value as the step's input instead of `input` (the agent loop journals a
    // model's input as a delta from the previous turn). Moved from when the step runs.
    json::value* journalInput = nullptr;
    // Lent to the effect as EffectContext::lentMessages (the agent loop's transcript).
    json::SharedArray lentMessages;
  };
  virtual json::value effect(std::string_view stepId, std::string_view effectId,
                             json::value input, const EffectOptions& options) = 0;

  // Several journaled effect calls run at once, at most `maxConcurrent` at a time (each on its
  // own thread through the chain, which is thread-safe): recorded ones return their outputs
  // without running; the rest run concurrently and are journaled in the order of `calls`
  // (a call that finished waits for those before it), so the log's order is deterministic and
  // a crash re-runs at most the calls not yet journaled. One outcome per call, in order: its
  // output, or the StepFailedError it failed with. A park (a call stopped by the kill switch)
  // is thrown once every call already running has finished and been journaled (none starts
  // after it, none that ran runs again), and so is a ContentStoreUnavailableError from
  // journaling a call (its blob lost with the commit, ADR 0019); another store failure or a
  // conflict is thrown at once.
  // Unknown effect ids throw NotFoundError before anything runs. Effects and middleware run
  // on several threads at once (they must be thread-safe, as a shared chain already requires).
  struct EffectCall {
    std::string stepId;
    std::string effectId;
    json::value input;
  };
  struct EffectOutcome {
    json::value output;
    std::exception_ptr failure;  // a StepFailedError; null when the call succeeded
  };
  virtual std::vector<EffectOutcome> effects(std::vector<EffectCall> calls, int maxConcurrent) = 0;

  // Runs the effect through the same chain but journals nothing (no step id): on a resume it
  // runs again. Unknown effect ids throw NotFoundError.
  virtual json::value invokeTransient(std::string_view effectId, json::value input) = 0;

  // The payload of the next signal `name` sent to this execution (the k-th call for a name
  // gets the k-th signal). When none has arrived the run parks (EXECUTION_PARKED) and the
  // workflow function is unwound; `signal` resumes it.
  virtual json::value awaitSignal(std::string_view name) = 0;

  // Parks the run for `reason` (e.g. "approval") naming `stepId`, waiting for signal
  // `signalName`; returns the signal's payload once it has arrived. awaitSignal with a reason.
  // `detail`: why, in words (EXECUTION_PARKED "detail", shown by `loom ls` and `loom run`).
  virtual json::value park(std::string_view reason, std::string_view stepId,
                           std::string_view signalName, std::string_view detail = {}) = 0;

  // park() with a deadline: the payload of signal `signalName` if it arrives before `timeout`
  // has passed (counted from the first call: step `deadlineStepId` records the time); nullopt
  // once it has passed without one. The time-out is recorded (step "<deadlineStepId>:timedOut"),
  // so a signal arriving later changes nothing on replay. Until then the run parks for
  // `reason` with that wake time (`loom worker` resumes it when it is due).
  virtual std::optional<json::value> parkUntil(std::string_view reason, std::string_view stepId,
                                               std::string_view signalName,
                                               std::string_view deadlineStepId,
                                               std::chrono::milliseconds timeout) = 0;

  // A durable timer: step `stepId` records the wake time (now + `duration` the first time; the
  // recorded time on replay); until then the run parks with reason "timer" and returns once
  // resumed after it (`loom worker` resumes it when due; a resume before it parks again).
  virtual void sleepUntil(std::string_view stepId, int64_t wakeAtMillis) = 0;
  virtual void sleep(std::string_view stepId, std::chrono::milliseconds duration) = 0;

  // True while the run is returning recorded values (no unrecorded step reached yet).
  virtual bool replaying() const = 0;

  // Patching code under live runs (the Temporal `patched()` pattern; docs/operations.md,
  // "Deploying new code"): true when this run reaches this point on the code that has the
  // change `changeId`, false when its log already goes past this point without it (a run
  // that recorded steps the code now asks for only after this call). Branch on it to keep
  // the old path for such runs:
  //   if (ctx.patched("fetch-v2")) ctx.step("fetch-v2", ...); else ctx.step("fetch", ...);
  // The answer is journaled the first time (as step "loom:patch:<changeId>"), so every later
  // replay of the run gets the same one; asking again in the run returns it too.
  virtual bool patched(std::string_view changeId) = 0;

  // True when the log holds the completed output of step `stepId`: step() and effect() for
  // it return that output without running anything or reading their input, so a caller may
  // skip building an expensive input (the agent loop's transcript copy on replay).
  virtual bool recorded(std::string_view stepId) const = 0;
  // What completed step `stepId` recorded of its model usage (STEP_COMPLETED "usage",
  // kernel/usage.h): replayed or run in this pass alike, so a loop adding it up gets the same
  // sums on every replay. nullopt: not completed, not a model step, or none reported.
  virtual std::optional<kernel::TokenUsage> stepUsage(std::string_view stepId) const = 0;

  // Checkpoints of a long loop's own state (docs/spec/snapshots.md, "Checkpoints"). A loop
  // that replays thousands of recorded steps on every resume (the agent loop) records, at the
  // start of each round, what it needs to go on from there; a snapshot keeps the newest one, so
  // a resume from that snapshot starts the loop at its checkpoint instead of at its first step.
  //
  // The checkpoint of `scope` the run's replay state holds: set by a resume from a snapshot
  // that kept one, or by setCheckpoint earlier in this run; nullptr when there is none (a
  // resume from the whole log starts the loop from its beginning). Valid until the next
  // setCheckpoint of the scope.
  virtual const json::value* checkpoint(std::string_view scope) const = 0;
  // Makes `state` the checkpoint of `scope` and forgets the recorded steps and signals whose
  // ids (names) start with one of `forget`: the loop promises never to ask for them again in
  // this run or any resume from this checkpoint, so snapshots stop carrying them. Nothing is
  // appended to the log (the log keeps every step); the next snapshot keeps the checkpoint.
  virtual void setCheckpoint(std::string_view scope, json::value state,
                             const std::vector<std::string>& forget) = 0;
  // Calls `visit` with each event of this execution's log, in order, as the run reads them
  // (sealed events opened): what a loop resumed from a checkpoint reads to rebuild state it
  // did not keep in it. Throws as a resume reading the log would (erased, corrupt).
  virtual void history(const std::function<void(const kernel::Event&)>& visit) const = 0;
};

// Thrown by a loop whose checkpoint (WorkflowContext::checkpoint) cannot be used: it does not
// read, or the state it rebuilds from the log disagrees with it. The runtime reports `reason`
// and runs the execution again from its whole log, as for an unusable snapshot. Throw it only
// between steps (nothing in flight): what was recorded until then is in the log and replays.
// Deliberately not a std::exception, so workflow code that catches std::exception (or
// loom::Error) around an agent loop does not swallow it and go on from a state that is wrong.
struct UnusableCheckpoint {
  std::string reason;
  int64_t effectsRun = 0;  // set by the runtime: steps the abandoned attempt ran
};

using WorkflowFn = std::function<json::value(WorkflowContext&)>;

struct Workflow {
  std::string name;
  std::string description;
  WorkflowFn fn;
};

// Workflows by name. Fill it before the runtime starts, then read-only (thread-safe reads).
class WorkflowRegistry {
 public:
  // Throws AlreadyExistsError for a second registration of `name`.
  void add(std::string name, std::string description, WorkflowFn fn);
  const Workflow* find(std::string_view name) const;
  std::vector<const Workflow*> all() const;

 private:
  std::map<std::string, Workflow, std::less<>> workflows_;
};

}  // namespace loom::workflow
