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

#include "content/claim_check_envelope.h"
#include "loom/json/json.h"
#include "loom/kernel/event.h"

namespace loom::sweep {

void visitCitedAddresses(const json::value& value,
                         const std::function<void(std::string_view address)>& visit);

// Every address cited anywhere in an event's data.
void visitCitedAddresses(const kernel::Event& event,
                         const std::function<void(std::string_view address)>& visit);

// The trusted position of ADR 0140 D11, the one place a recorded envelope is believed: the
// output of a STEP_COMPLETED, through at most one taint wrapper. nullptr for any other event
// (or a STEP_COMPLETED without an output). The value is inside `event`.
const json::value* trustedPosition(const kernel::Event& event);

// The well-formed envelope at the trusted position, whatever its retain flag (views into
// `event`); nullopt for any other event, position or shape.
std::optional<content::EnvelopeView> trustedEnvelopeOf(const kernel::Event& event);

std::vector<std::string> retainRootsOf(const kernel::Event& event);

// retainRootsOf without copies, for the sweep's hot loop: calls `visit` with each
// load-bearing address (a view into `event`, valid while it lives).
void forEachRetainRoot(const kernel::Event& event,
                       const std::function<void(std::string_view)>& visit);

}  // namespace loom::sweep
