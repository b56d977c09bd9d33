// The known control event types (kControlEventTypes in event.cc), for the stores' typed reads.
#pragma once

#include <string>
#include <vector>

namespace loom::kernel {

// The known control event types in byte order. A typed read through an index also returns the
// rows indexed under none of them (a body that does not read, a type a flipped byte changed),
// one index range per gap between them, so that it refuses those rows instead of passing over
// them; in a sound log every gap is empty.
std::vector<std::string> knownControlEventTypes();

}  // namespace loom::kernel
