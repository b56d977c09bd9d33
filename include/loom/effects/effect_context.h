// What a middleware and an effect see of one call. Built by the workflow runtime for each
// journaled step (or transient call) and passed by const reference down the chain.
#pragma once

#include <optional>
#include <string>

#include "loom/json/shared_array.h"

namespace loom::effects {

struct EffectContext {
  std::string executionId;
  std::string stepId;    // empty for invokeTransient (nothing is journaled)
  std::string effectId;  // the task's id (a tool's own name in an agent loop)
  std::string taskKind;  // from the TaskDefinition; "flow" for ctx.step; empty when unknown
  std::optional<std::string> subject;
  int attempt = 1;       // 1 for the first try; a retried step (after a stop) counts up
  bool transient = false;
  // The messages of a model call, lent by the agent loop instead of copied into the input
  // (loom/agent/model.h); empty for every other call. Immutable: a middleware that changes
  // them calls next with a copy of this context holding a new SharedArray.
  json::SharedArray lentMessages;
};

}  // namespace loom::effects
