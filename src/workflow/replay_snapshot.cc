#include "replay_snapshot.h"

#include <iostream>
#include <vector>

#include "kernel/log_check.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"

namespace loom::workflow {

namespace {

json::value stepToJson(const RecordedStep& step) {
  json::object o;
  if (step.completed) o["output"] = step.output;
  if (step.usage) o["usage"] = kernel::toJson(*step.usage);
  if (step.failedAttempts > 0) {
    o["failures"] = step.failedAttempts;
    o["error"] = json::object{{"code", step.errorCode}, {"message", step.errorMessage}};
    o["retryable"] = step.retryable;
    if (step.nextAttemptAtMillis) o["nextAttemptAt"] = formatTimestamp(*step.nextAttemptAtMillis);
    if (step.retriedFailures > 0) o["retries"] = step.retriedFailures;
  }
  return o;
}

RecordedStep stepFromJson(const json::object& o) {
  RecordedStep step;
  if (const auto* output = o.if_contains("output")) {
    step.completed = true;
    step.output = *output;
  }
  if (o.contains("usage")) step.usage = kernel::usageFromJson(json::requireObject(o, "usage"));
  if (auto failures = json::optionalInt(o, "failures")) {
    if (*failures < 1) throw InvalidArgumentError("'failures' must be 1 or more");
    step.failedAttempts = static_cast<int>(*failures);
    const auto& error = json::requireObject(o, "error");
    step.errorCode = json::requireString(error, "code");
    step.errorMessage = json::requireString(error, "message");
    const auto& retryable = json::require(o, "retryable");
    if (!retryable.is_bool()) throw InvalidArgumentError("'retryable' must be a boolean");
    step.retryable = retryable.get_bool();
    if (auto next = json::optionalString(o, "nextAttemptAt")) {
      step.nextAttemptAtMillis = parseTimestamp(std::string(*next));
    }
    if (auto retries = json::optionalInt(o, "retries")) {
      if (*retries < 1 || *retries > step.failedAttempts) {
        throw InvalidArgumentError("'retries' must be 1 to 'failures'");
      }
      step.retriedFailures = static_cast<int>(*retries);
    }
  }
  if (!step.completed && step.failedAttempts == 0) {
    throw InvalidArgumentError("a step holds neither an output nor a failure");
  }
  return step;
}

// Reads a state whose version this build knows; InvalidArgumentError on any defect.
ReplayLog readState(const json::object& o, int64_t seq) {
  if (json::requireInt(o, "seq") != seq) {
    throw InvalidArgumentError("its 'seq' is " + std::to_string(json::requireInt(o, "seq")) +
                               ", not the seq it is stored under");
  }
  ReplayLog log;
  log.workflow = json::requireString(o, "workflow");
  log.startedAtMillis = parseTimestamp(std::string(json::requireString(o, "startedAt")));
  log.subject = json::optionalString(o, "subject");
  log.codeVersion = json::optionalString(o, "codeVersion");
  log.input = json::require(o, "input");
  for (const auto& [id, step] : json::requireObject(o, "steps")) {
    if (!step.is_object())
      throw InvalidArgumentError("step '" + std::string(id) + "' is not an object");
    try {
      log.steps.emplace(std::string(id), stepFromJson(step.get_object()));
    } catch (const InvalidArgumentError& e) {
      throw InvalidArgumentError("step '" + std::string(id) + "': " + e.what());
    }
  }
  for (const auto& [name, payloads] : json::requireObject(o, "signals")) {
    if (!payloads.is_array()) {
      throw InvalidArgumentError("signals '" + std::string(name) + "' is not an array");
    }
    auto& list = log.signals[std::string(name)];
    list.assign(payloads.get_array().begin(), payloads.get_array().end());
  }
  if (const auto* last = o.if_contains("last"); last && !last->is_null()) {
    if (!last->is_object()) throw InvalidArgumentError("'last' is not an object");
    std::string type(json::requireString(last->get_object(), "type"));
    log.lastType = kernel::eventTypeFromName(type);
    if (!log.lastType) throw InvalidArgumentError("'last.type' is unknown: '" + type + "'");
    if (const auto* parked = last->get_object().if_contains("parked")) {
      if (!parked->is_object()) throw InvalidArgumentError("'last.parked' is not an object");
      log.lastParked = parked->get_object();
      const auto* w = log.lastParked.if_contains("waitingFor");
      if (w != nullptr && w->is_string()) log.lastWait = std::string(w->get_string());
    }
  }
  if (const auto* checkpoints = o.if_contains("checkpoints")) {  // version 2
    if (!checkpoints->is_object()) throw InvalidArgumentError("'checkpoints' is not an object");
    for (const auto& [scope, state] : checkpoints->get_object()) {
      log.checkpoints.emplace(std::string(scope), state);
    }
  }
  log.nextSeq = seq + 1;
  log.snapshotSeq = seq;
  return log;
}

std::string where(const std::string& executionId, int64_t seq) {
  return "snapshot of execution '" + executionId + "' at seq " + std::to_string(seq);
}

}  // namespace

json::value replayStateToJson(const ReplayLog& log, int64_t seq) {
  // Steps sorted by id (the map's order): the same state always has the same text.
  json::object steps;
  steps.reserve(log.steps.size());
  for (const auto& [id, step] : log.steps) steps[id] = stepToJson(step);
  json::object signals;
  for (const auto& [name, payloads] : log.signals) {
    signals[name] = json::array(payloads.begin(), payloads.end());
  }
  json::object checkpoints;
  for (const auto& [scope, state] : log.checkpoints) checkpoints[scope] = state;
  json::value last;
  if (log.lastType) {
    json::object o{{"type", kernel::eventTypeName(*log.lastType)}};
    if (*log.lastType == kernel::EventType::kExecutionParked) o["parked"] = log.lastParked;
    last = std::move(o);
  }
  json::object state{{"version", kSnapshotStateVersion},
                     {"seq", seq},
                     {"workflow", log.workflow},
                     {"startedAt", formatTimestamp(log.startedAtMillis)},
                     {"subject", log.subject ? json::value(*log.subject) : json::value()},
                     {"input", log.input},
                     {"steps", std::move(steps)},
                     {"signals", std::move(signals)},
                     {"last", std::move(last)},
                     {"checkpoints", std::move(checkpoints)}};
  if (log.codeVersion) state["codeVersion"] = *log.codeVersion;
  return state;
}

ReplayLog replayStateFromJson(const json::value& state, const std::string& executionId,
                              int64_t seq) {
  if (!state.is_object()) {
    throw DataLossError(where(executionId, seq) + " is corrupt: its state is " +
                        std::string(json::kindName(state)) + ", not an object");
  }
  const auto& o = state.get_object();
  const auto* version = o.if_contains("version");
  if (version == nullptr || !version->is_int64()) {
    throw DataLossError(where(executionId, seq) + " is corrupt: no integer 'version'");
  }
  if (version->get_int64() > kSnapshotStateVersion ||
      version->get_int64() < kSnapshotStateOldestReadable) {
    throw FailedPreconditionError(
        where(executionId, seq) + " has state version " + std::to_string(version->get_int64()) +
        "; this build reads versions " + std::to_string(kSnapshotStateOldestReadable) + " to " +
        std::to_string(kSnapshotStateVersion));
  }
  try {
    return readState(o, seq);
  } catch (const InvalidArgumentError& e) {
    throw DataLossError(where(executionId, seq) + " is corrupt: " + e.what());
  }
}

ReplayLog loadReplayLog(const kernel::EventStore& store, const RuntimeOptions& options,
                        const kernel::ExecutionInfo& info) {
  const std::string& id = info.id;
  if (options.snapshots != nullptr) {
    std::optional<ReplayLog> fromSnapshot;
    try {
      if (auto snapshot = options.snapshots->latest(id)) {
        if (snapshot->seq >= info.nextSeq) {
          warn(options, where(id, snapshot->seq) + " is beyond the log's end (seq " +
                            std::to_string(info.nextSeq - 1) + "); ignored, the log is replayed");
        } else {
          ReplayLog log = replayStateFromJson(snapshot->state, id, snapshot->seq);
          if (log.startedAtMillis != info.startedAtMillis || log.workflow != info.workflow) {
            warn(options, where(id, snapshot->seq) +
                              " belongs to an earlier execution of the same id; ignored, the "
                              "log is replayed");
          } else {
            fromSnapshot = std::move(log);
          }
        }
      }
    } catch (const Error& e) {
      // A snapshot is an optimization: the log alone is the truth, so report and go on.
      warn(options, std::string("cannot use the snapshot of execution '") + id + "': " + e.what() +
                        "; the log is replayed");
    }
    if (fromSnapshot) {
      store.scan(id, fromSnapshot->nextSeq, [&](const kernel::Event& e) {
        refuseErased(id, e);
        // The store checks this rule only on a scan from the start; the snapshot knows which
        // steps completed before its seq (those a checkpoint forgot are never asked for again).
        if (auto step = kernel::stepEventId(e)) {
          auto it = fromSnapshot->steps.find(*step);
          kernel::refuseAfterCompletion(id, e, it != fromSnapshot->steps.end() &&
                                                   it->second.completed);
        }
        fromSnapshot->apply(e);
      });
      return std::move(*fromSnapshot);
    }
  }
  return ReplayLog::load(store, id);
}

void writeSnapshot(const RuntimeOptions& options, const std::string& executionId, ReplayLog& log) {
  int64_t seq = log.nextSeq - 1;
  if (options.snapshots == nullptr || seq < 1 || seq <= log.snapshotSeq) return;
  log.snapshotSeq = seq;
  try {
    options.snapshots->put(kernel::Snapshot{executionId, seq, replayStateToJson(log, seq)});
    options.snapshots->prune(executionId, seq);
  } catch (const Error& e) {
    warn(options, "could not store a " + where(executionId, seq) + ": " + e.what() +
                      "; the run goes on (a resume reads more of the log)");
  }
}

void warn(const RuntimeOptions& options, std::string_view message) {
  if (options.onWarn) {
    options.onWarn(message);
  } else {
    std::cerr << "loom: warning: " << message << '\n';
  }
}

}  // namespace loom::workflow
