// The option rows of security.keys, security.crypto and compliance.erase (ADR 0140
// D8), appended to the one option table (options.cc) in their groups.
#pragma once

#include <vector>

#include "app/options.h"

namespace loom::app {

void addSecurityKeyRows(std::vector<OptionRow>& rows);
void addComplianceRows(std::vector<OptionRow>& rows);

}  // namespace loom::app
