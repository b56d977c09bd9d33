// What a run needs from its execution's log: recorded step outcomes by step id, signals by
// name, the start fields and how the log ends. Built by one scan of the log, or from a
// snapshot of it plus the events after the snapshot (replay_snapshot.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/kernel/event_store.h"

namespace loom::workflow {

struct RecordedStep {
  bool completed = false;
  std::string effectId;   // the effect it recorded (empty from a snapshot)
  json::value output;     // completed
  std::string errorCode;  // failed
  std::string errorMessage;
  bool retryable = false;  // failed, and may run again (stopped, or execution.retry)
  int failedAttempts = 0;  // STEP_FAILED records for this step
  // A durable retry's next attempt time: the step runs again from then on (sooner only by
  // `loom retry`). nullopt: at once when retryable (a kill-switch stop).
  std::optional<int64_t> nextAttemptAtMillis;
  // STEP_FAILED records with a nextAttemptAt: the attempts execution.retry counts (a
  // kill-switch stop is not one).
  int retriedFailures = 0;
  std::optional<kernel::TokenUsage> usage;  // completed model steps: what they recorded
};

struct ReplayLog {
  std::string workflow;
  json::value input;
  std::optional<std::string> subject;
  int64_t startedAtMillis = 0;  // EXECUTION_STARTED's time (tells executions of one id apart)
  std::optional<std::string> codeVersion;  // EXECUTION_STARTED's: the code the run started on
  // By id, sorted: a checkpoint forgets a range of ids sharing a prefix.
  std::map<std::string, RecordedStep, std::less<>> steps;
  std::map<std::string, std::vector<json::value>, std::less<>> signals;
  // The signal the run's last park waited for (EXECUTION_PARKED's waitingFor) while only
  // signals followed that park, else empty (a snapshot written at that park gives it too). A
  // watched replay asks that the code wait for it again before new work when it was sent.
  std::string lastWait;
  std::optional<kernel::EventType> lastType;  // the newest event's type
  json::object lastParked;                    // its data, when it is EXECUTION_PARKED
  int64_t nextSeq = 1;
  int64_t snapshotSeq = 0;  // seq of the snapshot last loaded or written; 0 = none
  // Loop checkpoints by scope (WorkflowContext::setCheckpoint): kept by snapshots, never in
  // the log, so a ReplayLog built from the whole log has none.
  std::map<std::string, json::value, std::less<>> checkpoints;

  // Adds one event (in seq order). The rvalue form moves the recorded output in.
  void apply(const kernel::Event& event);
  void apply(kernel::Event&& event);
  // Sets the checkpoint of `scope` and drops the steps and signals whose ids (names) start
  // with one of `forget` (WorkflowContext::setCheckpoint).
  void checkpoint(std::string_view scope, json::value state,
                  const std::vector<std::string>& forget);
  // Scans the whole log of `executionId`.
  static ReplayLog load(const kernel::EventStore& store, const std::string& executionId);
};

// Throws FailedPreconditionError when `event` reads as erased (its subject's key was
// shredded; docs/spec/events.md, "Sealed events"): an erased execution cannot be resumed.
void refuseErased(const std::string& executionId, const kernel::Event& event);

}  // namespace loom::workflow
