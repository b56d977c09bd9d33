// ExecutionContext::effects: journaled effect calls run concurrently (the agent loop's
// parallel tool calls). Workers only invoke the chain (reading the context's execution id and
// subject, which no one changes while the run goes on); the run's own thread claims step ids,
// replays recorded calls and journals outcomes in call order, so only it changes the
// ExecutionContext.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "execution_context.h"
#include "loom/util/error.h"
#include "loom/workflow/errors.h"

namespace loom::workflow {
namespace {

// One call to run: filled by the run's thread, run by a worker, settled by the run's thread.
struct Pending {
  std::size_t index = 0;  // in `calls`
  const effects::Task* task = nullptr;
  int attempt = 1;
  json::value input;
  json::value journaled;
  json::value output;
  std::exception_ptr error;
  int64_t startedAt = 0;
  int64_t endedAt = 0;
  enum class State { kWaiting, kDone, kSkipped };
  State state = State::kWaiting;  // GUARDED_BY(Workers::mu_)
};

// Up to `width` threads taking the pending calls in order; joined on destruction (a call
// already running is waited for). After stop() no call starts: the rest are marked skipped.
// When a thread cannot be created, the ones that were run every call; when none can be,
// the constructor throws and nothing ran.
class Workers {
 public:
  template <typename Run>
  Workers(std::vector<Pending>& pending, int width, Run run) : pending_(pending) {
    for (int t = 0; t < width; ++t) {
      try {
        threads_.emplace_back([this, run] { work(run); });
      } catch (const std::system_error&) {
        if (threads_.empty()) throw;
        break;  // fewer threads: those started take every call
      }
    }
  }
  ~Workers() {
    stop();
    for (auto& t : threads_) t.join();
  }
  void stop() { stopped_ = true; }
  // Waits until call k has run (true) or was skipped after stop() (false).
  bool waitFor(std::size_t k) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return pending_[k].state != Pending::State::kWaiting; });
    return pending_[k].state == Pending::State::kDone;
  }

 private:
  template <typename Run>
  void work(const Run& run) {
    for (std::size_t k; (k = next_.fetch_add(1)) < pending_.size();) {
      bool skip = stopped_;
      if (!skip) run(pending_[k]);
      std::lock_guard lock(mu_);
      pending_[k].state = skip ? Pending::State::kSkipped : Pending::State::kDone;
      cv_.notify_all();
    }
  }

  std::vector<Pending>& pending_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
};

}  // namespace

std::vector<WorkflowContext::EffectOutcome> ExecutionContext::effects(std::vector<EffectCall> calls,
                                                                      int maxConcurrent) {
  std::vector<const effects::Task*> tasks;
  for (const auto& c : calls) {
    const effects::Task* task = env_.tasks.find(c.effectId);
    if (task == nullptr) {
      throw NotFoundError("step '" + c.stepId + "' calls effect '" + c.effectId +
                          "', which is not registered");
    }
    tasks.push_back(task);
  }
  auto stepCall = [&](std::size_t i, json::value* journaled) {
    return StepCall{calls[i].stepId, calls[i].effectId, tasks[i]->definition.kind, journaled,
                    nullptr};
  };
  std::vector<EffectOutcome> out(calls.size());
  std::vector<Pending> pending;
  pending.reserve(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    int attempt = 1;
    try {
      if (auto recorded = beginStep(stepCall(i, nullptr), attempt)) {
        out[i].output = std::move(*recorded);
        continue;
      }
    } catch (const StepFailedError&) {
      out[i].failure = std::current_exception();  // a recorded final failure
      continue;
    }
    Pending p;
    p.index = i;
    p.task = tasks[i];
    p.attempt = attempt;
    if (env_.options.journalEffectInputs) p.journaled = calls[i].input;
    p.input = std::move(calls[i].input);
    pending.push_back(std::move(p));
  }
  auto run = [this, &calls](Pending& p) {
    const auto& c = calls[p.index];
    StepCall call{c.stepId, c.effectId, p.task->definition.kind, nullptr, nullptr};
    p.startedAt = env_.options.clock->nowMillis();
    notify({RunEvent::Kind::kStepStarted, executionId_, std::string(call.stepId),
            std::string(call.effectId), std::string(call.taskKind)});
    try {
      p.output = env_.chain.invoke(contextFor(call, p.attempt), std::move(p.input),
                                   [&p](const effects::EffectContext& ctx, json::value in) {
                                     return p.task->fn(ctx, std::move(in));
                                   });
    } catch (...) {
      p.error = std::current_exception();
    }
    p.endedAt = env_.options.clock->nowMillis();
  };
  int width = static_cast<int>(std::min<std::size_t>(std::max(maxConcurrent, 1), pending.size()));
  std::optional<Workers> workers;
  if (width > 1) {
    try {
      workers.emplace(pending, width, run);
    } catch (const std::system_error&) {
      // No thread could be started: the calls run one after another below.
    }
  }
  // A park (a call stopped by the kill switch, a result the content store could not take or
  // whose blob was lost with its journaling commit) ends the run after this batch: the calls
  // already running still finish and are journaled, so none of them runs twice; calls not started
  // yet are not started. So does what the store read before each call after the first finds, as
  // before each step: a cancel, or another runner's appends (found by `loom sim`: a runner stalled
  // after journaling one call of a turn woke after a takeover and ran the next call, which the new
  // owner had recorded; now it starts none, and journaling the calls still running is refused).
  std::exception_ptr park;
  for (std::size_t k = 0; k < pending.size(); ++k) {
    Pending& p = pending[k];
    if (k > 0 && !park) {
      try {
        stopIfCancelled();
      } catch (...) {
        park = std::current_exception();
        if (workers) workers->stop();
      }
    }
    if (workers) {
      if (!workers->waitFor(k)) continue;  // skipped after the park
    } else if (park) {
      continue;
    } else {
      run(p);
    }
    StepCall call = stepCall(p.index, env_.options.journalEffectInputs ? &p.journaled : nullptr);
    if (!p.error) {
      try {
        out[p.index].output =
            finishStep(call, p.attempt, std::move(p.output), p.startedAt, p.endedAt);
      } catch (const ContentStoreUnavailableError&) {
        // The call's blob was lost with the log's commit (ADR 0019): nothing of it is
        // recorded. As for a park, the calls already running are still journaled first.
        if (!park) park = std::current_exception();
        if (workers) workers->stop();
      }
      continue;
    }
    try {
      failStep(call, p.attempt, p.error);
    } catch (const StepFailedError&) {
      out[p.index].failure = std::current_exception();
    } catch (const ParkRequest&) {
      if (!park) park = std::current_exception();
      if (workers) workers->stop();
    }
  }
  if (park) std::rethrow_exception(park);
  return out;
}

}  // namespace loom::workflow
