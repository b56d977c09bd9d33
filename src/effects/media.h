// Media results: the shape of a tool result the agent loop renders as the tool message's
// content parts, {"parts": [{"type": ...}, ...]} (docs/spec/agent-state.md, writeBack). It
// lives here, below the middleware and the agent, so the claim-check's pass-through for a
// returnsMedia tool (ADR 0140 D9) and the agent's writeBack share one test of the shape.
// Pure functions, thread-safe.
#pragma once

#include "loom/json/json.h"

namespace loom::effects {

// True when `result` is exactly {"parts": [...]}: a non-empty array of objects that each have
// a "type". A taint wrapper is not looked through (call it on effects::untainted(result)).
bool isMediaResult(const json::value& result);

}  // namespace loom::effects
