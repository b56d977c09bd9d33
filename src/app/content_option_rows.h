// The option rows of execution.claimCheck (ADR 0140), storage.contentStore and
// storage.retention, appended to the one option table (options.cc) in their groups.
#pragma once

#include <vector>

#include "app/options.h"

namespace loom::app {

void addClaimCheckRows(std::vector<OptionRow>& rows);
void addContentStorageRows(std::vector<OptionRow>& rows);

}  // namespace loom::app
