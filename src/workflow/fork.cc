#include "loom/workflow/fork.h"

#include "content/claim_check_envelope.h"
#include "loom/kernel/lease.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"
#include "replay_log.h"

namespace loom::workflow {
namespace {

using kernel::Event;
using kernel::EventType;

bool isEnd(EventType type) {
  return type == EventType::kExecutionCompleted || type == EventType::kExecutionFailed ||
         type == EventType::kExecutionCancelled;
}

bool isCancelSignal(const Event& e) {
  if (e.type != EventType::kSignalReceived) return false;
  const auto* name = e.data.if_contains("name");
  return name != nullptr && name->is_string() && name->get_string() == kCancelSignal;
}

std::string stepIdOf(const Event& e) {
  if (e.type != EventType::kStepCompleted && e.type != EventType::kStepFailed) return {};
  const auto* id = e.data.if_contains("stepId");
  return id != nullptr && id->is_string() ? std::string(id->get_string()) : std::string();
}

// The seq the fork's log stops before.
int64_t cutOf(const std::string& sourceId, const std::vector<Event>& source,
              const ForkOptions& options) {
  if (options.atStep.has_value() == options.atSeq.has_value()) {
    throw InvalidArgumentError("a fork needs exactly one of a step id and a seq to start at");
  }
  const int64_t next = source.empty() ? 1 : source.back().seq + 1;
  if (options.atSeq) {
    if (*options.atSeq < 2 || *options.atSeq > next) {
      throw InvalidArgumentError("execution '" + sourceId + "' has events 1 to " +
                                 std::to_string(next - 1) + "; a fork starts at a seq from 2 to " +
                                 std::to_string(next) + ", not " + std::to_string(*options.atSeq) +
                                 " (`loom log " + sourceId + "` lists them)");
    }
    return *options.atSeq;
  }
  for (const auto& e : source) {
    if (stepIdOf(e) == *options.atStep) return e.seq;
  }
  throw NotFoundError("execution '" + sourceId + "' recorded no step '" + *options.atStep +
                      "'; `loom log " + sourceId + "` lists its steps (or pass a seq)");
}

}  // namespace

std::vector<Event> forkedLog(const std::string& sourceId, const std::vector<Event>& source,
                             const ForkOptions& options, const std::string& codeVersion,
                             int64_t nowMillis) {
  if (source.empty() || source.front().type != EventType::kExecutionStarted) {
    throw DataLossError("execution '" + sourceId + "' has no EXECUTION_STARTED at seq 1");
  }
  for (const auto& e : source) {
    try {
      refuseErased(sourceId, e);
    } catch (const FailedPreconditionError& erased) {
      throw FailedPreconditionError(std::string(erased.what()) +
                                    "; a fork of it would hold what erasure removed: refused");
    }
  }
  const int64_t cut = cutOf(sourceId, source, options);
  std::vector<Event> out;
  for (const auto& e : source) {
    if (e.seq >= cut) break;
    // A fork starts on the code at hand: its source's upgrades are the source's.
    if (isEnd(e.type) || isCancelSignal(e) || e.type == EventType::kCodeUpgraded) continue;
    Event copy = e;
    copy.seq = static_cast<int64_t>(out.size()) + 1;
    copy.atMillis = nowMillis;
    out.push_back(std::move(copy));
  }
  json::object& started = out.front().data;
  started.erase("codeVersion");
  if (!codeVersion.empty()) started["codeVersion"] = codeVersion;
  started["forkedFrom"] = json::object{{"id", sourceId}, {"seq", cut}};
  if (options.input) started["input"] = *options.input;
  return out;
}

ForkOptions rerunPoint(const std::string& sourceId, const std::vector<Event>& source) {
  if (source.empty() || source.back().type != EventType::kExecutionFailed) {
    throw FailedPreconditionError("execution '" + sourceId +
                                  "' did not fail; `loom rerun` runs a failed run again (`loom "
                                  "fork " + sourceId + " --at STEP` starts any run again from a "
                                  "step)");
  }
  std::string failedStep;  // the last step that failed (a step run beside it may end later)
  for (auto it = source.rbegin(); it != source.rend() && failedStep.empty(); ++it) {
    if (it->type == EventType::kStepFailed) failedStep = stepIdOf(*it);
  }
  ForkOptions fork;
  if (failedStep.empty()) {
    fork.atSeq = source.back().seq;
  } else {
    fork.atStep = failedStep;
  }
  return fork;
}

}  // namespace loom::workflow

namespace loom::workflow {

RunResult WorkflowRuntime::fork(const std::string& sourceId, const ForkOptions& options) {
  if (!store_.info(sourceId)) throw NotFoundError("no execution '" + sourceId + "' (see `loom ls`)");
  return forkOf(sourceId, store_.read(sourceId), options);
}

RunResult WorkflowRuntime::forkOf(const std::string& sourceId,
                                  const std::vector<kernel::Event>& source,
                                  const ForkOptions& options) {
  ForkOptions admitted = options;
  if (admitted.input) {
    content::admitFromOutside(*admitted.input, "the input of the fork of '" + sourceId + "'");
    if (this->options().journalFilter) {
      admitted.input = this->options().journalFilter(std::move(*admitted.input));
    }
  }
  RunResult r;
  r.id = options.id.empty() ? newExecutionId(*this->options().clock) : options.id;
  validateExecutionId(r.id);
  std::vector<kernel::Event> log = forkedLog(sourceId, source, admitted,
                                             this->options().codeVersion,
                                             this->options().clock->nowMillis());
  try {
    store_.append(r.id, 1, std::move(log));
  } catch (const ConflictError&) {
    throw AlreadyExistsError("execution '" + r.id + "' already exists; pass another --id");
  }
  try {
    return resume(r.id);
  } catch (const kernel::LeaseHeldError&) {
    return r;  // a worker took the new run first: it runs there
  }
}

RunResult WorkflowRuntime::rerun(const std::string& failedId, const std::string& newId) {
  if (!store_.info(failedId)) throw NotFoundError("no execution '" + failedId + "' (see `loom ls`)");
  std::vector<kernel::Event> source = store_.read(failedId);
  ForkOptions options = rerunPoint(failedId, source);
  options.id = newId;
  return forkOf(failedId, source, options);
}

}  // namespace loom::workflow
