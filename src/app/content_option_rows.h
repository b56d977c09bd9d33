// The option rows of storage.contentStore and storage.retention, appended to the one option
// table (options.cc) in the storage group.
#pragma once

#include <vector>

#include "app/options.h"

namespace loom::app {

void addContentStorageRows(std::vector<OptionRow>& rows);

}  // namespace loom::app
