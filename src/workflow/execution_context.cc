#include "execution_context.h"

#include <algorithm>
#include <random>

#include "loom/effects/errors.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"
#include "loom/workflow/errors.h"
#include "loom/workflow/retry_policy.h"
#include "replay_snapshot.h"
#include "step_usage.h"

namespace loom::workflow {

using kernel::Event;
using kernel::EventType;

namespace {

// What a run parked for a durable retry shows (`loom ls`, the park's "detail").
std::string retryDetail(std::string_view effectId, int attempt, std::string_view code,
                        std::string_view message) {
  return "attempt " + std::to_string(attempt) + " of '" + std::string(effectId) + "' failed (" +
         std::string(code) + "): " + std::string(message);
}

}  // namespace

ExecutionContext::ExecutionContext(const RunEnvironment& env, std::string executionId,
                                   ReplayLog& log)
    : env_(env),
      executionId_(std::move(executionId)),
      log_(log),
      trackState_(writesSnapshots(env.options)),
      // The log was read just now, under the lease: the first step need not read it again.
      lastCancelPollMillis_(env.options.clock->nowMillis()) {}

void ExecutionContext::append(Event event) {
  if (env_.options.replayCheck) {  // the run ends or parks here: the log must go no further
    if (auto left = firstUnasked()) {
      diverged(*left, "step '" + *left + "'",
               "went on to " + std::string(kernel::eventTypeName(event.type)) +
                   " without asking for it");
    }
  }
  constexpr int kMaxAbsorbed = 1000;
  for (int round = 0;; ++round) {
    try {
      // One copy for the store (an initializer list would make two); `event` stays for the
      // replay state and for a retry after a conflict.
      std::vector<Event> batch;
      batch.push_back(event);
      int64_t next = env_.lease != nullptr
                         ? env_.store.appendLeased(*env_.lease, log_.nextSeq, std::move(batch))
                         : env_.store.append(executionId_, log_.nextSeq, std::move(batch));
      if (!trackState_) {
        notifyStop(event);
        log_.nextSeq = next;
        // How the log ends now (a park after this one compares with it, sameParking).
        if (event.type == EventType::kExecutionParked) log_.lastParked = event.data;
        log_.lastType = event.type;
        return;
      }
      notifyStop(event);
      event.seq = next - 1;
      bool ended = event.type == EventType::kExecutionCompleted ||
                   event.type == EventType::kExecutionFailed ||
                   event.type == EventType::kExecutionCancelled;
      log_.apply(std::move(event));
      if (!ended) maybeWriteSnapshot(env_.options, executionId_, log_);
      return;
    } catch (const kernel::LeaseLostError&) {
      throw;  // another runner took the execution over: record nothing more
    } catch (const ConflictError&) {
      bool onlySignals = absorbSignals();
      if (!onlySignals || round >= kMaxAbsorbed) {
        throw ConflictError("execution '" + executionId_ +
                            "' was appended to by another runner; it is running elsewhere "
                            "(stop that runner, then `loom resume " +
                            executionId_ + "`)");
      }
    }
  }
}

void ExecutionContext::setCheckpoint(std::string_view scope, json::value state,
                                     const std::vector<std::string>& forget) {
  if (!env_.options.journalEffectInputs) return;
  if (watchesReplay()) {  // a step or wait forgotten here unasked is one the code skipped
    for (const auto& prefix : forget) {
      if (log_.lastWait.starts_with(prefix)) checkWaited("went past it");
      for (auto it = log_.steps.lower_bound(prefix);
           it != log_.steps.end() && it->first.starts_with(prefix); ++it) {
        if (!usedStepIds_.contains(it->first)) {
          diverged(it->first, "step '" + it->first + "'", "went past it without asking for it");
        }
      }
    }
  }
  if (env_.options.journalFilter) state = env_.options.journalFilter(std::move(state));
  log_.checkpoint(scope, std::move(state), forget);
}

void ExecutionContext::history(const std::function<void(const Event&)>& visit) const {
  env_.store.scan(executionId_, 1, [&](const Event& e) {
    refuseErased(executionId_, e);
    visit(e);
  });
}

bool ExecutionContext::absorbSignals() {
  bool onlySignals = true;
  env_.store.scan(executionId_, log_.nextSeq, [&](const Event& e) {
    refuseErased(executionId_, e);
    if (e.type != EventType::kSignalReceived) onlySignals = false;
    if (onlySignals) log_.apply(e);
  });
  return onlySignals;
}

void ExecutionContext::stopIfCancelled() {
  // A cancel sent while a step ran is absorbed when that step's append meets it; the store is
  // read only for one that came between appends, at most every kCancelPollMillis (not per
  // step), and whenever the clock went back. The runtime's clock, not a steady one: a runner
  // stalled past its lease's ttl (found by `loom sim`: a takeover in simulated time) reads the
  // store before it starts another step, and stops if another runner appended meanwhile.
  int64_t now = env_.options.clock->nowMillis();
  std::optional<kernel::ExecutionInfo> info;
  if (!lastCancelPollMillis_ || now < *lastCancelPollMillis_ ||
      now - *lastCancelPollMillis_ >= kCancelPollMillis) {
    lastCancelPollMillis_ = now;
    info = env_.store.info(executionId_);
  }
  if (info && info->nextSeq > log_.nextSeq && !absorbSignals()) {
    throw ConflictError("execution '" + executionId_ +
                        "' was appended to by another runner; it is running elsewhere (stop "
                        "that runner, then `loom resume " +
                        executionId_ + "`)");
  }
  auto it = log_.signals.find(kCancelSignal);
  if (it == log_.signals.end() || it->second.empty()) return;
  const json::value& payload = it->second.front();
  const auto* reason = payload.is_object() ? payload.get_object().if_contains("reason") : nullptr;
  throw CancelRequest{reason && reason->is_string() ? std::string(reason->get_string())
                                                    : std::string("cancelled")};
}

json::value ExecutionContext::step(std::string_view stepId, FunctionRef<json::value()> fn) {
  StepCall call{stepId, stepId, effects::kKindFlow, nullptr, nullptr};
  return runStep(call, json::value(),
                 [&](const effects::EffectContext&, json::value) { return fn(); });
}

json::value ExecutionContext::effect(std::string_view stepId, std::string_view effectId,
                                     json::value input, const EffectOptions& options) {
  const effects::Task* task = env_.tasks.find(effectId);
  if (task == nullptr) {
    throw NotFoundError("step '" + std::string(stepId) + "' calls effect '" +
                        std::string(effectId) + "', which is not registered");
  }
  // The journaled input is taken before the chain may move or change `input`.
  // (if/else, not ?: whose mixed value categories would copy the journaled input)
  json::value journaled;
  if (env_.options.journalEffectInputs && options.journalInput) {
    journaled = std::move(*options.journalInput);
  } else if (env_.options.journalEffectInputs) {
    journaled = input;
  }
  StepCall call{stepId, effectId, task->definition.kind,
                env_.options.journalEffectInputs ? &journaled : nullptr, &options.lentMessages};
  return runStep(call, std::move(input), [task](const effects::EffectContext& ctx, json::value in) {
    return task->fn(ctx, std::move(in));
  });
}

json::value ExecutionContext::runStep(const StepCall& call, json::value input,
                                      effects::Terminal terminal) {
  int attempt = 1;
  if (auto recorded = beginStep(call, attempt)) return std::move(*recorded);
  int64_t startedAt = env_.options.clock->nowMillis();
  notify({RunEvent::Kind::kStepStarted, executionId_, std::string(call.stepId),
          std::string(call.effectId), std::string(call.taskKind)});
  json::value output;
  try {
    output = env_.chain.invoke(contextFor(call, attempt), std::move(input), terminal);
  } catch (...) {
    failStep(call, attempt, std::current_exception());
  }
  return finishStep(call, attempt, std::move(output), startedAt, env_.options.clock->nowMillis());
}

std::optional<json::value> ExecutionContext::beginStep(const StepCall& call, int& attempt) {
  std::string stepId(call.stepId);
  if (!usedStepIds_.insert(stepId).second) throw DuplicateStepError(stepId);
  if (watchesReplay()) {
    auto it = log_.steps.find(stepId);
    checkAsked(call, it == log_.steps.end() ? nullptr : &it->second);
  }
  if (!log_.steps.contains(stepId)) askedNew_ = true;  // new work: the replay is behind it
  if (auto it = log_.steps.find(stepId); it != log_.steps.end()) {
    RecordedStep& recorded = it->second;
    if (recorded.completed) {
      ++replayedSteps_;
      if (trackState_) return recorded.output;  // the snapshot needs it still
      return std::move(recorded.output);        // each step id is used once per run
    }
    if (!recorded.retryable) {
      throw StepFailedError(stepId, errorCodeFromName(recorded.errorCode), recorded.errorMessage);
    }
    attempt = recorded.failedAttempts + 1;
    if (recorded.nextAttemptAtMillis && !env_.retryNow &&
        env_.options.clock->nowMillis() < *recorded.nextAttemptAtMillis) {
      stopIfCancelled();
      endReplay();  // not due yet: park again until then
      throw ParkRequest{"retrying", "", stepId,
                        retryDetail(call.effectId, recorded.failedAttempts, recorded.errorCode,
                                    recorded.errorMessage),
                        recorded.nextAttemptAtMillis};
    }
  }
  stopIfCancelled();  // before the step runs: a cancelled run starts nothing new
  endReplay();
  return std::nullopt;
}

void ExecutionContext::checkAsked(const StepCall& call, const RecordedStep* recorded) const {
  const std::string stepId(call.stepId);
  if (recorded == nullptr) {
    if (auto left = firstUnasked()) {
      diverged(*left, "step '" + *left + "'",
               "asked for step '" + stepId + "' (effect " + std::string(call.effectId) +
                   "), which the log does not hold, without asking for it");
    }
    checkWaited("asked for step '" + stepId + "'");
    if (env_.options.replayCheck) throw ReplayLogEnd{stepId};
    return;  // "latest": the replay is checked; this step is the run's new work
  }
  if (!recorded->effectId.empty() && recorded->effectId != call.effectId) {
    diverged(stepId, "it as a call of effect " + recorded->effectId,
             "asked for it as a call of effect " + std::string(call.effectId));
  }
  // A recorded attempt that would run again (a retry, a stop) ends what the log can check.
  if (env_.options.replayCheck && !recorded->completed && recorded->retryable) {
    throw ReplayLogEnd{stepId};
  }
}

void ExecutionContext::checkWaited(const std::string& what) const {
  const std::string& name = log_.lastWait;  // the run's last wait, since answered
  if (!name.empty() && log_.signals.contains(name) && !signalCursor_.contains(name)) {
    diverged(name, "a wait for signal '" + name + "', which was answered",
             what + " without waiting for it");
  }
}

bool ExecutionContext::watchesReplay() const {
  return env_.options.replayCheck ||
         (env_.options.versioning == Versioning::kLatest && !askedNew_);
}

void ExecutionContext::diverged(const std::string& stepId, const std::string& recorded,
                                const std::string& asked) const {
  if (env_.options.replayCheck) throw ReplayDiverged{stepId, recorded, asked};
  throw ParkRequest{"diverged", "", stepId,
                    "the log recorded " + recorded + "; the code " + asked +
                        " (execution.versioning = \"latest\": it continues on the code at hand "
                        "only where that replays its log; see docs/operations.md, \"Deploying new "
                        "code\")"};
}

json::value ExecutionContext::runWorkflow(
    const std::function<json::value(WorkflowContext&)>& fn) {
  auto checkEnd = [&](const std::string& how) {
    if (!watchesReplay()) return;
    if (auto left = firstUnasked()) diverged(*left, "step '" + *left + "'", how);
  };
  json::value output;
  try {
    output = fn(*this);
  } catch (const std::exception& e) {
    checkEnd("failed without asking for it (" + std::string(e.what()) + ")");
    throw;
  }
  checkEnd("completed without asking for it");
  return output;
}

std::optional<kernel::TokenUsage> ExecutionContext::stepUsage(std::string_view stepId) const {
  {
    std::lock_guard lock(ranUsageMu_);
    if (auto it = ranUsage_.find(stepId); it != ranUsage_.end()) return it->second;
  }
  auto it = log_.steps.find(stepId);
  return it != log_.steps.end() && it->second.completed ? it->second.usage : std::nullopt;
}

std::optional<std::string> ExecutionContext::firstUnasked() const {
  for (const auto& [id, recorded] : log_.steps) {
    if (!usedStepIds_.contains(id)) return id;
  }
  return std::nullopt;
}

json::value ExecutionContext::finishStep(const StepCall& call, int attempt, json::value output,
                                         int64_t startedAt, int64_t endedAt) {
  Event event = kernel::stepCompleted(call.stepId, call.taskKind, call.effectId, output, endedAt);
  if (call.input) {
    event.data["input"] = env_.options.journalFilter
                              ? env_.options.journalFilter(std::move(*call.input))
                              : std::move(*call.input);
  }
  if (attempt > 1) event.data["attempt"] = attempt;
  event.data["durationMs"] = std::max<int64_t>(0, endedAt - startedAt);  // the clock may step back
  if (call.taskKind == "llm") {
    if (auto usage = recordedUsage(call.effectId, output, env_.options.prices)) {
      json::object data{{"usage", *usage}};
      std::lock_guard lock(ranUsageMu_);
      ranUsage_[std::string(call.stepId)] = *kernel::stepUsage(data);
      event.data["usage"] = std::move(*usage);
    }
  }
  append(std::move(event));
  ++effectsRun_;
  RunEvent finished{RunEvent::Kind::kStepFinished, executionId_, std::string(call.stepId),
                    std::string(call.effectId), std::string(call.taskKind),
                    std::max<int64_t>(0, endedAt - startedAt)};
  if (call.taskKind == "llm") finished.usage = stepUsage(call.stepId);
  notify(std::move(finished));
  return output;
}

void ExecutionContext::notifyStop(const Event& event) const {
  if (!env_.options.onRunEvent) return;
  if (event.type == EventType::kExecutionParked) {
    const auto* reason = event.data.if_contains("reason");
    const auto* step = event.data.if_contains("stepId");
    notify({RunEvent::Kind::kParked, executionId_,
            step && step->is_string() ? std::string(step->get_string()) : std::string(),
            reason && reason->is_string() ? std::string(reason->get_string()) : std::string()});
  } else if (event.type == EventType::kExecutionCompleted ||
             event.type == EventType::kExecutionFailed ||
             event.type == EventType::kExecutionCancelled) {
    std::string status = event.type == EventType::kExecutionCompleted ? "completed"
                         : event.type == EventType::kExecutionFailed  ? "failed"
                                                                      : "cancelled";
    notify({RunEvent::Kind::kEnded, executionId_, "", status});
  }
}

void ExecutionContext::notify(RunEvent event) const {
  if (!env_.options.onRunEvent) return;
  try {
    env_.options.onRunEvent(event);
  } catch (...) {
    // Report-only: a progress line or subscriber that fails stops nothing.
  }
}

effects::EffectContext ExecutionContext::contextFor(const StepCall& call, int attempt) const {
  return effects::EffectContext{executionId_,
                                std::string(call.stepId),
                                std::string(call.effectId),
                                std::string(call.taskKind),
                                log_.subject,
                                attempt,
                                false,
                                call.lentMessages ? *call.lentMessages : json::SharedArray()};
}

void ExecutionContext::failStep(const StepCall& call, int attempt,
                                const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const ParkRequest&) {
    throw;
  } catch (const ConflictError&) {
    throw;  // the log moved under us: nothing to record
  } catch (const ContentStoreUnavailableError& e) {
    // The effect ran but its result could not be stored: not its failure, nothing to record
    // (so no attempt is counted); tried again at the policy's slowest pace until it is stored.
    int64_t next = env_.options.clock->nowMillis() +
                   env_.options.retry.forEffect(call.effectId).maxIntervalMillis;
    throw ParkRequest{"contentStoreUnavailable", "", std::string(call.stepId), e.what(), next};
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kStopped) {
      recordFailure(call, errorCodeName(e.code()), e.what(), true, attempt);
      if (dynamic_cast<const effects::KillSwitchUnreadable*>(&e) != nullptr) {
        // Not an operator's stop: the kill switch's store was unreachable (a database
        // restarting). Parked with a wake time, so a worker tries again once it is due.
        int64_t next = env_.options.clock->nowMillis() +
                       env_.options.retry.forEffect(call.effectId).initialIntervalMillis;
        throw ParkRequest{"effectStopped", "", std::string(call.stepId), e.what(), next};
      }
      throw ParkRequest{"effectStopped", "", std::string(call.stepId)};
    }
    std::string message = e.what();
    if (isRetryableFailure(e.code())) {
      retryLater(call, attempt, e);
      if (int tries = retriesOf(call.stepId) + 1; tries > 1) {
        message += " (" + std::to_string(tries) +
                   " attempts, the most execution.retry.maxAttempts allows)";
      }
    }
    recordFailure(call, errorCodeName(e.code()), message, false, attempt);
    throw StepFailedError(std::string(call.stepId), e.code(), message);
  } catch (const std::exception& e) {
    recordFailure(call, errorCodeName(ErrorCode::kInternal), e.what(), false, attempt);
    throw StepFailedError(std::string(call.stepId), ErrorCode::kInternal, e.what());
  }
}

int ExecutionContext::retriesOf(std::string_view stepId) const {
  auto it = log_.steps.find(stepId);
  return it == log_.steps.end() ? 0 : it->second.retriedFailures;
}

void ExecutionContext::retryLater(const StepCall& call, int attempt, const Error& error) {
  RetryPolicy policy = env_.options.retry.forEffect(call.effectId);
  int tries = retriesOf(call.stepId) + 1;  // the policy's count: stops are not attempts
  if (tries >= policy.maxAttempts) return;
  const auto* asked = dynamic_cast<const RetryAfterError*>(&error);
  thread_local std::mt19937_64 random{std::random_device{}()};
  double u = std::uniform_real_distribution<double>(0.0, 1.0)(random);
  int64_t next = env_.options.clock->nowMillis() +
                 retryDelayMillis(policy, tries, u, asked ? asked->retryAfterMillis() : -1);
  std::string code(errorCodeName(error.code()));
  recordFailure(call, code, error.what(), true, attempt, next);
  throw ParkRequest{"retrying",
                    "",
                    std::string(call.stepId),
                    retryDetail(call.effectId, attempt, code, error.what()),
                    next,
                    true};
}

void ExecutionContext::recordFailure(const StepCall& call, std::string_view code,
                                     std::string_view message, bool retryable, int attempt,
                                     std::optional<int64_t> nextAttemptAt) {
  Event event = kernel::stepFailed(call.stepId, call.taskKind, call.effectId, code, message,
                                   retryable, env_.options.clock->nowMillis());
  if (attempt > 1 || nextAttemptAt) event.data["attempt"] = attempt;
  if (nextAttemptAt) event.data["nextAttemptAt"] = formatTimestamp(*nextAttemptAt);
  append(std::move(event));
}

json::value ExecutionContext::invokeTransient(std::string_view effectId, json::value input) {
  if (env_.options.replayCheck) throw ReplayLogEnd{"(a transient call of " + std::string(effectId) + ")"};
  const effects::Task* task = env_.tasks.find(effectId);
  effects::EffectContext ctx{
      executionId_, "", std::string(effectId), task ? task->definition.kind : "", log_.subject, 1,
      true};
  if (task == nullptr) {
    throw NotFoundError("invokeTransient of effect '" + std::string(effectId) +
                        "', which is not registered");
  }
  try {
    return env_.chain.invoke(ctx, std::move(input),
                             [task](const effects::EffectContext& c, json::value in) {
                               return task->fn(c, std::move(in));
                             });
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kStopped) throw;
    // Stopped by the kill switch: park like a stopped step (nothing to record, no step id),
    // so that resume after `loom unkill` runs the call again.
    endReplay();
    throw ParkRequest{"effectStopped", "", ""};
  }
}

bool ExecutionContext::patched(std::string_view changeId) {
  if (changeId.empty()) throw InvalidArgumentError("patched() needs a change id");
  if (auto known = patches_.find(changeId); known != patches_.end()) return known->second;
  const std::string stepId = "loom:patch:" + std::string(changeId);
  // The log goes past this point when a recorded step (another patch's marker included) is
  // one this run has not asked for yet.
  bool pastHere = false;
  if (!log_.steps.contains(stepId)) {
    for (const auto& [id, recorded] : log_.steps) {
      if (!usedStepIds_.contains(id)) {
        pastHere = true;
        break;
      }
    }
  }
  json::value answer = step(stepId, [&] { return json::value(!pastHere); });
  if (!answer.is_bool()) {
    throw DataLossError("execution '" + executionId_ + "': the patch step '" + stepId +
                        "' recorded " + json::toText(answer) +
                        ", not the true or false a patched() answer is");
  }
  patches_.emplace(std::string(changeId), answer.as_bool());
  return answer.as_bool();
}

void ExecutionContext::endReplay() {
  if (!replaying_) return;
  replaying_ = false;
  if (env_.options.onReplayEnd) env_.options.onReplayEnd(executionId_);
}

void ExecutionContext::sleepUntil(std::string_view stepId, int64_t wakeAtMillis) {
  timer(stepId, [wakeAtMillis] { return wakeAtMillis; });
}

void ExecutionContext::sleep(std::string_view stepId, std::chrono::milliseconds duration) {
  timer(stepId, [&] { return env_.options.clock->nowMillis() + duration.count(); });
}

int64_t ExecutionContext::recordWakeAt(std::string_view stepId, FunctionRef<int64_t()> wakeAt) {
  json::value recorded = step(stepId, [&] { return json::value{{"wakeAt", wakeAt()}}; });
  const auto* at = recorded.is_object() ? recorded.get_object().if_contains("wakeAt") : nullptr;
  if (at == nullptr || !at->is_int64()) {
    throw DataLossError("execution '" + executionId_ + "': the timer step '" + std::string(stepId) +
                        "' recorded " + json::toText(recorded) +
                        ", not {\"wakeAt\": <ms since the epoch>}");
  }
  return at->get_int64();
}

std::optional<json::value> ExecutionContext::parkUntil(std::string_view reason,
                                                       std::string_view stepId,
                                                       std::string_view signalName,
                                                       std::string_view deadlineStepId,
                                                       std::chrono::milliseconds timeout) {
  int64_t wake = recordWakeAt(deadlineStepId,
                              [&] { return env_.options.clock->nowMillis() + timeout.count(); });
  std::string timedOut = std::string(deadlineStepId) + ":timedOut";
  if (recorded(timedOut)) {  // decided before: a signal that came later changes nothing
    step(timedOut, [] { return json::value(true); });
    return std::nullopt;
  }
  auto& cursor = signalCursor_[std::string(signalName)];
  auto it = log_.signals.find(signalName);
  if (it != log_.signals.end() && cursor < it->second.size()) return it->second[cursor++];
  if (env_.options.clock->nowMillis() >= wake) {
    step(timedOut, [] { return json::value(true); });
    return std::nullopt;
  }
  stopIfCancelled();
  endReplay();
  throw ParkRequest{std::string(reason), std::string(signalName), std::string(stepId), "", wake};
}

void ExecutionContext::timer(std::string_view stepId, FunctionRef<int64_t()> wakeAt) {
  int64_t wake = recordWakeAt(stepId, wakeAt);
  if (env_.options.clock->nowMillis() >= wake) return;
  stopIfCancelled();
  endReplay();
  throw ParkRequest{"timer", "", std::string(stepId), "", wake};
}

json::value ExecutionContext::awaitSignal(std::string_view name) {
  return park("signal", "", name);
}

json::value ExecutionContext::park(std::string_view reason, std::string_view stepId,
                                   std::string_view signalName, std::string_view detail) {
  auto& cursor = signalCursor_[std::string(signalName)];
  auto it = log_.signals.find(signalName);
  if (it != log_.signals.end() && cursor < it->second.size()) return it->second[cursor++];
  stopIfCancelled();
  endReplay();
  throw ParkRequest{std::string(reason), std::string(signalName), std::string(stepId),
                    std::string(detail)};
}

}  // namespace loom::workflow
