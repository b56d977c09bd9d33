// The WorkflowContext of one run: replays recorded steps from the ReplayLog, runs the others
// through the middleware chain and journals them. Internal to the runtime.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <unordered_set>

#include "loom/effects/middleware.h"
#include "loom/effects/task.h"
#include "loom/kernel/event_store.h"
#include "loom/workflow/runtime.h"
#include "loom/workflow/workflow.h"
#include "replay_log.h"

namespace loom::workflow {

// Thrown through the workflow function to park the run. Deliberately not a std::exception,
// so workflow code that catches std::exception does not swallow it.
struct ParkRequest {
  std::string reason;
  std::string waitingFor;
  std::string stepId;
  std::string detail;  // what happened, for a park caused by an error (contentStoreUnavailable)
  std::optional<int64_t> wakeAtMillis;  // a timer's wake time, a retry's next attempt
  bool attemptFailed = false;           // "retrying" after an attempt this run made just now
};

// Thrown in a replay check (RuntimeOptions::replayCheck) where the code and the log part:
// `stepId` (a step the code asked for, or a recorded one it never asked for), what the log
// recorded there and what the code asked. Not a std::exception, as ParkRequest.
struct ReplayDiverged {
  std::string stepId;
  std::string recorded;
  std::string asked;
};
// Thrown in a replay check where the code asks for what the log does not hold (step
// `stepId`) and nothing recorded is left unasked: the log is checked to its end.
struct ReplayLogEnd {
  std::string stepId;
};

// Thrown at a step boundary once the run has seen `loom cancel`'s signal: the runtime records
// EXECUTION_CANCELLED and the run ends.
struct CancelRequest {
  std::string reason;
};

struct RunEnvironment {
  kernel::EventStore& store;
  const effects::TaskRegistry& tasks;
  const effects::EffectChain& chain;
  const RuntimeOptions& options;
  const kernel::Lease* lease = nullptr;  // the run's lease: every append is fenced by it
  // `loom retry`: a step whose durable retry is not due yet runs now instead of parking.
  bool retryNow = false;
};

class ExecutionContext : public WorkflowContext {
 public:
  ExecutionContext(const RunEnvironment& env, std::string executionId, ReplayLog& log);

  const std::string& executionId() const override { return executionId_; }
  const std::optional<std::string>& subject() const override { return log_.subject; }
  const json::value& input() const override { return log_.input; }
  json::value step(std::string_view stepId, FunctionRef<json::value()> fn) override;
  // Runs the workflow function `fn` with this context. While the replay is watched
  // (watchesReplay), ending (returning or throwing) before every recorded step was asked for
  // is a divergence (diverged()).
  json::value runWorkflow(const std::function<json::value(WorkflowContext&)>& fn);
  using WorkflowContext::effect;
  json::value effect(std::string_view stepId, std::string_view effectId, json::value input,
                     const EffectOptions& options) override;
  std::vector<EffectOutcome> effects(std::vector<EffectCall> calls, int maxConcurrent) override;
  json::value invokeTransient(std::string_view effectId, json::value input) override;
  json::value awaitSignal(std::string_view name) override;
  json::value park(std::string_view reason, std::string_view stepId, std::string_view signalName,
                   std::string_view detail = {}) override;
  std::optional<json::value> parkUntil(std::string_view reason, std::string_view stepId,
                                       std::string_view signalName, std::string_view deadlineStepId,
                                       std::chrono::milliseconds timeout) override;
  void sleepUntil(std::string_view stepId, int64_t wakeAtMillis) override;
  void sleep(std::string_view stepId, std::chrono::milliseconds duration) override;
  bool replaying() const override { return replaying_; }
  bool patched(std::string_view changeId) override;
  bool recorded(std::string_view stepId) const override {
    auto it = log_.steps.find(stepId);
    return it != log_.steps.end() && it->second.completed;
  }
  std::optional<kernel::TokenUsage> stepUsage(std::string_view stepId) const override;
  const json::value* checkpoint(std::string_view scope) const override {
    auto it = log_.checkpoints.find(scope);
    return it == log_.checkpoints.end() ? nullptr : &it->second;
  }
  // The state is filtered as journaled values are (secret redaction): snapshots keep it. Without
  // journaled effect inputs (RuntimeOptions::journalEffectInputs false) a loop could not rebuild
  // what it did not keep, so no checkpoint is set and nothing is forgotten.
  void setCheckpoint(std::string_view scope, json::value state,
                     const std::vector<std::string>& forget) override;
  void history(const std::function<void(const kernel::Event&)>& visit) const override;
  // Leaves replay (once): the run reached a step, park or end the log does not record.
  void endReplay();

  // Appends one event at the log's end. A concurrent SIGNAL_RECEIVED appended by `signal` is
  // absorbed (added to the replay log) and the append retried; any other concurrent writer
  // is a ConflictError. When the runtime writes snapshots, the event is added to the replay
  // log too (so it stays the state of the whole log) and a snapshot is written when due.
  void append(kernel::Event event);

  // Throws CancelRequest when the log holds the cancel signal (kCancelSignal), checking the
  // store for signals appended since the run last looked (at most every 250 ms). Called before a
  // step runs, before a park and before the workflow starts: the step boundaries where a run may
  // stop.
  void stopIfCancelled();

  // True when the log holds a signal `name` that the run has not consumed yet.
  bool hasUnreadSignal(std::string_view name) const {
    if (name.empty()) return false;
    auto it = log_.signals.find(name);
    auto cursor = signalCursor_.find(name);
    std::size_t read = cursor == signalCursor_.end() ? 0 : cursor->second;
    return it != log_.signals.end() && it->second.size() > read;
  }

  int64_t replayedSteps() const { return replayedSteps_; }
  int64_t effectsRun() const { return effectsRun_; }

 private:
  struct StepCall {
    std::string_view stepId;
    std::string_view effectId;
    std::string_view taskKind;
    json::value* input;                     // journaled (moved from) when set
    const json::SharedArray* lentMessages;  // lent to the effect when set
  };
  json::value runStep(const StepCall& call, json::value input, effects::Terminal terminal);
  // Claims the step id; returns the recorded output of a completed step (or throws its
  // recorded final failure); otherwise sets `attempt`, leaves replay and returns nullopt.
  std::optional<json::value> beginStep(const StepCall& call, int& attempt);
  // Replay check: throws ReplayDiverged or ReplayLogEnd for a step the check cannot replay.
  void checkAsked(const StepCall& call, const RecordedStep* recorded) const;
  // A recorded step this run has not asked for; nullopt: none.
  std::optional<std::string> firstUnasked() const;
  // A replay check, or versioning "latest" before the run's first new step: the code must
  // ask for what the log recorded.
  bool watchesReplay() const;
  // Where the code does new work (`what`): the run's last wait, answered since, must have been
  // waited for again (diverged() otherwise).
  void checkWaited(const std::string& what) const;
  // Where the code and the log part: ReplayDiverged in a replay check, else a park "diverged"
  // at `stepId` (nothing after it runs).
  [[noreturn]] void diverged(const std::string& stepId, const std::string& recorded,
                             const std::string& asked) const;
  effects::EffectContext contextFor(const StepCall& call, int attempt) const;
  // What attempt `attempt` of a call that threw becomes: a park (stopped; a retryable failure
  // with attempts left: "retrying"), a journaled STEP_FAILED and StepFailedError, or the error
  // itself (a conflict). Always throws.
  [[noreturn]] void failStep(const StepCall& call, int attempt, const std::exception_ptr& error);
  // A retryable failure with attempts left under execution.retry: journals it with its next
  // attempt time and throws ParkRequest "retrying". Returns when no attempt is left.
  void retryLater(const StepCall& call, int attempt, const Error& error);
  // The attempts of step `stepId` execution.retry has counted so far (recorded ones).
  int retriesOf(std::string_view stepId) const;
  // Journals a completed call and returns its output.
  json::value finishStep(const StepCall& call, int attempt, json::value output, int64_t startedAt,
                         int64_t endedAt);
  void recordFailure(const StepCall& call, std::string_view code, std::string_view message,
                     bool retryable, int attempt = 1,
                     std::optional<int64_t> nextAttemptAt = std::nullopt);
  // Adds the signals appended after log_.nextSeq to the replay log; false (adding nothing
  // more) at the first event of another kind: another runner wrote to the log.
  bool absorbSignals();
  // The timer of step `stepId`: records what `wakeAt` returns the first time, then parks
  // until that time.
  void timer(std::string_view stepId, FunctionRef<int64_t()> wakeAt);
  // Records (first time) or replays the wake time of timer step `stepId`.
  int64_t recordWakeAt(std::string_view stepId, FunctionRef<int64_t()> wakeAt);

  const RunEnvironment& env_;
  std::string executionId_;
  ReplayLog& log_;
  std::unordered_set<std::string> usedStepIds_;
  bool askedNew_ = false;  // a step the log does not hold was asked for
  std::map<std::string, bool, std::less<>> patches_;  // patched()'s answers, by change id
  std::map<std::string, std::size_t, std::less<>> signalCursor_;
  bool replaying_ = true;
  // The replay log is kept equal to the state of the whole log (for snapshots): recorded
  // outputs are copied out rather than moved, and appended events are applied to it.
  bool trackState_ = false;
  int64_t replayedSteps_ = 0;
  int64_t effectsRun_ = 0;
  static constexpr int64_t kCancelPollMillis = 250;
  // stopIfCancelled's last store read, by the runtime's clock (so a simulated stall past a
  // lease's ttl is one too); at first, when the log was loaded (just before the context).
  std::optional<int64_t> lastCancelPollMillis_;
  // Tells RuntimeOptions::onRunEvent, if any; never throws. notifyStop: for a park or an end
  // this runner just appended.
  void notify(RunEvent event) const;
  void notifyStop(const kernel::Event& event) const;
  // The usage of the model steps run in this pass, by step id (finishStep may run on the
  // threads of an effects() batch).
  mutable std::mutex ranUsageMu_;
  std::map<std::string, kernel::TokenUsage, std::less<>> ranUsage_;  // GUARDED_BY(ranUsageMu_)
};

}  // namespace loom::workflow
