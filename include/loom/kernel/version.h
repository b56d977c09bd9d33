// Version constants of the kernel. KERNEL_ABI changes when the C++ API of the kernel SPIs
// changes incompatibly; EVENT_SCHEMA when the JSON of stored events does (docs/spec/events.md).
// A store refuses to open a log written under a newer EVENT_SCHEMA than it knows.
#pragma once

namespace loom {

inline constexpr int KERNEL_ABI = 2;  // 2: leases in the EventStore SPI
// 2: EXECUTION_CANCELLED and the status "cancelled" (a superset of 1: a database of 1 is
// recorded as 2 when this build opens it). 3: EXECUTION_STARTED's "codeVersion", kept clear in
// a sealed one (a superset of 2, recorded likewise). 4: CODE_UPGRADED (`loom upgrade`), its
// "codeVersion" kept clear likewise (a superset of 3). 5: a model step's "usage" (tokens and
// cost), kept clear likewise (a superset of 4).
inline constexpr int EVENT_SCHEMA = 5;
// The oldest EVENT_SCHEMA this build can read.
inline constexpr int EVENT_SCHEMA_OLDEST_READABLE = 1;

}  // namespace loom
