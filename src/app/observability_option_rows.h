// The option rows of observability.prices (docs/observability.md): per model id, what a
// million tokens cost, from which each model step's cost is recorded.
#pragma once

#include <vector>

#include "app/options.h"

namespace loom::app {

void addObservabilityRows(std::vector<OptionRow>& rows);

}  // namespace loom::app
