// This machine's name as Loom records it (a lease's owner host, the home record's per-machine
// key row): gethostname(2), or "unknown-host" when it fails.
#pragma once

#include <string>

namespace loom {

std::string hostName();

}  // namespace loom
