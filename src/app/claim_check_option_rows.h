// The option rows of execution.claimCheck (ADR 0140: the agent claim-check opt-in, its
// digests and reclaimable list), appended to the one option table (options.cc) in the
// execution group.
#pragma once

#include <vector>

#include "app/options.h"

namespace loom::app {

void addClaimCheckRows(std::vector<OptionRow>& rows);

}  // namespace loom::app
