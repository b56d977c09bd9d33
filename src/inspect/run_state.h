// The folded state of a run, as `loom state` and the inspector show it: the kernel's fold, or
// for an agent run each agent loop's folded state (docs/spec/agent-state.md). One streamed pass
// over the log: never all of it in memory. Functions over a thread-safe store.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loom/json/json.h"
#include "loom/kernel/event_store.h"

namespace loom::inspect {

struct FoldedRun {
  std::optional<json::value> kernelState;  // set for a run with no agent step (or kernelOnly)
  std::vector<std::pair<std::string, json::value>> loops;  // agent loop name, folded state
  std::optional<std::string> codeVersion;  // the code it goes on on (its start's, or upgrade's)
  kernel::TokenUsage usage;                // its model steps' (STEP_COMPLETED "usage")
};

// Folds execution `id`: each agent loop's state from its first step on; the kernel's fold is
// kept only while no agent step has appeared (always with `kernelOnly`).
FoldedRun foldRun(const kernel::EventStore& store, const std::string& id, bool kernelOnly);
// The same over events in hand (an archived copy's, unsealed), seq 1, 2, ...
FoldedRun foldRun(const std::vector<kernel::Event>& events, bool kernelOnly);

// What `loom state --json` prints: the kernel's state, or {"id", "loops": [{"loop",
// "stateBytes", "state"}]}; either with "codeVersion" when the run recorded one and "usage"
// (kernel::toJson of TokenUsage) when its model steps reported some. Built by
// moves (the states are taken from `run`).
json::value toJson(FoldedRun&& run, const std::string& id);

}  // namespace loom::inspect
