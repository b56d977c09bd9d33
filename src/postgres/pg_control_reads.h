// Reads of the PostgreSQL control log (PostgresEventStore::readControl, readControlOfTypes):
// every row's checksum checked; a typed read goes through the index control_by_type
// (pg_schema.h), asking for the wanted types and every gap between the known types, so a row
// indexed under no known type is met and refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/kernel/event.h"
#include "pg_pool.h"

namespace loom::postgres {

// The whole control log from `fromSeq` on; CorruptEventError for a row that fails its checksum,
// does not read, or is missing (a gap in seq).
std::vector<kernel::ControlEvent> controlEvents(Pool& pool, int64_t fromSeq);
// The control events of `types` from `fromSeq` on, by seq; CorruptEventError as above, and for
// a row whose type is unknown.
std::vector<kernel::ControlEvent> controlEventsOfTypes(Pool& pool,
                                                       const std::vector<std::string>& types,
                                                       int64_t fromSeq);

}  // namespace loom::postgres
