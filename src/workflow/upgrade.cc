#include "upgrade_run.h"

#include <algorithm>

#include "loom/kernel/lease.h"
#include "loom/util/error.h"
#include "loom/workflow/replay_check.h"

namespace loom::workflow {
namespace {

using kernel::Event;
using kernel::EventType;

// The version the run continues on now: its newest CODE_UPGRADED's, else its start's.
std::optional<std::string> versionOf(const std::vector<Event>& log) {
  std::optional<std::string> version;
  for (const auto& e : log) {
    if (e.type != EventType::kExecutionStarted && e.type != EventType::kCodeUpgraded) continue;
    const auto* v = e.data.if_contains("codeVersion");
    version = v != nullptr && v->is_string() ? std::optional(std::string(v->get_string()))
                                             : std::nullopt;
  }
  return version;
}

std::string named(const std::optional<std::string>& version) {
  return version ? *version : std::string("no version (recorded before versions)");
}

void requireReplays(const ReplayCheckResult& check, const std::string& id,
                    const std::optional<std::string>& from, const std::string& to) {
  if (check.outcome == "matched") return;
  std::string why =
      check.outcome == "diverged"
          ? "at step '" + check.stepId + "' its log recorded " + check.recorded +
                " and the code at hand " + check.asked
          : "its log could not be replayed here: " + check.recorded;
  throw FailedPreconditionError(
      "execution '" + id + "' was not upgraded to " + to + ": " + why +
      ". It stays on " + named(from) + "; continue it with that code, or start it again on " +
      "this code from before that step (`loom fork " + id + " --at STEP`)");
}

}  // namespace

UpgradeResult upgradeLeased(kernel::EventStore& store, const WorkflowRegistry& workflows,
                            const effects::TaskRegistry& tasks, const RuntimeOptions& options,
                            const kernel::Lease& lease, const std::string& id) {
  if (options.codeVersion.empty()) {
    throw FailedPreconditionError("this program declares no code version, so it cannot take "
                                  "runs over (set execution.codeVersion)");
  }
  for (int round = 0;; ++round) {
    auto info = store.info(id);
    if (!info) throw NotFoundError("no execution '" + id + "' (see `loom ls`)");
    if (kernel::isEnded(info->status)) {
      throw FailedPreconditionError(
          "execution '" + id + "' has ended (" + std::string(kernel::statusName(info->status)) +
          "); nothing continues on it, so there is nothing to upgrade (`loom fork` or `loom "
          "rerun` start it again on the code at hand)");
    }
    std::vector<Event> log = store.read(id);
    UpgradeResult r{.id = id, .from = versionOf(log), .to = options.codeVersion};
    if (r.from == r.to) return r;
    ReplayCheckResult check = checkReplay(id, log, workflows, tasks);
    requireReplays(check, id, r.from, r.to);
    r.replayedSteps = check.replayedSteps;
    const int64_t now = options.clock->nowMillis();
    std::vector<Event> events;
    events.push_back(kernel::codeUpgraded(r.to, r.from, now));
    if (info->status == kernel::ExecutionStatus::kParked) {
      // Still parked where it was (signals may have come since): the log ends in its park
      // again, which is where a worker reads a timer's due time.
      auto park = std::find_if(log.rbegin(), log.rend(), [](const Event& e) {
        return e.type == EventType::kExecutionParked;
      });
      if (park != log.rend()) {
        Event again = *park;
        again.atMillis = now;
        events.push_back(std::move(again));
      }
    }
    try {
      store.appendLeased(lease, info->nextSeq, std::move(events));
      r.upgraded = true;
      return r;
    } catch (const kernel::LeaseLostError&) {
      throw;
    } catch (const ConflictError&) {
      if (round >= 100) throw;  // a signal landed meanwhile: look again
    }
  }
}

}  // namespace loom::workflow
