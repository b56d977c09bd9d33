// The content walker: which content addresses a recorded value cites, and which of those are
// load-bearing (DESIGN §4, ADR 0140 D6/D11).
// - visitCitedAddresses finds every {"__loomContent": H} anywhere in a value (envelope refs,
//   refs nested in outputs, inputs, snapshots, archived events).
// - retainRootsOf returns the refs an event makes load-bearing: the `ref` of an envelope with
//   `retain: true` that is the whole output of a STEP_COMPLETED, directly or inside exactly one
//   taint wrapper. A look-alike nested anywhere else (an unlisted tool's output) is not.
// Pure functions, thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/json/json.h"
#include "loom/kernel/event.h"

namespace loom::sweep {

void visitCitedAddresses(const json::value& value,
                         const std::function<void(std::string_view address)>& visit);

// Every address cited anywhere in an event's data.
void visitCitedAddresses(const kernel::Event& event,
                         const std::function<void(std::string_view address)>& visit);

// The envelope at the trusted position of a STEP_COMPLETED output (top level, or inside one
// taint wrapper), whatever its retain flag; nullopt for any other event or output.
std::optional<json::value> topLevelEnvelopeOf(const kernel::Event& event);

std::vector<std::string> retainRootsOf(const kernel::Event& event);

// retainRootsOf without copies, for the sweep's hot loop: calls `visit` with each
// load-bearing address (a view into `event`, valid while it lives).
void forEachRetainRoot(const kernel::Event& event,
                       const std::function<void(std::string_view)>& visit);

}  // namespace loom::sweep
