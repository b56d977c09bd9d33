// ExecutionFilter matching, shared by the stores that filter in C++.
#pragma once

#include "loom/kernel/event_store.h"

namespace loom::kernel {

bool matches(const ExecutionFilter& filter, const ExecutionInfo& info);

}  // namespace loom::kernel
