// Replay checks (`loom replay-check`, docs/operations.md "Replay checks"): a recorded run
// replayed against the code at hand, in memory. Nothing runs: every step the code asks for
// returns what the log recorded; the check reports the first place where the code and the log
// part (a step the log recorded that the code never asks for, or asks for as another effect).
// The run's own log is never written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loom/effects/task.h"
#include "loom/kernel/event.h"
#include "loom/kernel/event_store.h"
#include "loom/workflow/workflow.h"

namespace loom::workflow {

struct ReplayCheckResult {
  std::string executionId;
  // "matched": the code asks for what the log recorded, to where the log ends; "diverged":
  // see the fields below; "unchecked": the check could not replay it (`recorded` says why:
  // its workflow is not registered here, an erased run).
  std::string outcome;
  std::string stepId;    // diverged: where
  std::string recorded;  // diverged: what the log holds there; unchecked: why
  std::string asked;     // diverged: what the code did instead ("asked for ...", "went ...")
  int64_t replayedSteps = 0;
};

// Checks run `executionId` whose whole log (read with its keys) is `events` against
// `workflows` (and their tasks). Throws only what cannot be a result (an empty log).
ReplayCheckResult checkReplay(const std::string& executionId, std::vector<kernel::Event> events,
                              const WorkflowRegistry& workflows,
                              const effects::TaskRegistry& tasks);

// For a program's own tests (C++): every run of `store` that `filter` selects, checked as
// above, in id order; the runs whose outcome is not "matched" are the ones to report:
//   for (const auto& r : checkReplays(store, workflows, tasks))
//     EXPECT_EQ(r.outcome, "matched") << r.executionId << " at " << r.stepId << ": " << r.asked;
std::vector<ReplayCheckResult> checkReplays(const kernel::EventStore& store,
                                            const WorkflowRegistry& workflows,
                                            const effects::TaskRegistry& tasks,
                                            const kernel::ExecutionFilter& filter = {});

}  // namespace loom::workflow
