// The kill switch's stops as the inspector and `loom kill --json` / `loom killed --json` print
// them.
#pragma once

#include <optional>
#include <vector>

#include "loom/json/json.h"
#include "loom/middleware/kill_switch_store.h"

namespace loom::inspect {

// {"changed"?, "stops": [{"effectId", "at"}]}.
json::object stopsJson(const std::vector<middleware::KillSwitchEntry>& stops,
                       std::optional<bool> changed);

}  // namespace loom::inspect
