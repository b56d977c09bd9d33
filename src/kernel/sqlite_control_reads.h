// A typed read of the SQLite control log (SqliteEventStore::readControlOfTypes) through the
// index control_by_type (sqlite_schema.h): one index range per wanted type and one per gap
// between the known types (control_types.h), so the rows indexed under no known type are met
// and refused, and the cost grows with the rows returned, not with the log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/kernel/event.h"
#include "util/sqlite_db.h"

namespace loom::kernel {

// The control events of `types` from `fromSeq` on, by seq. Throws CorruptEventError for a row
// whose checksum fails, that does not read, or whose type is unknown.
std::vector<ControlEvent> controlEventsOfTypes(sqlite::Db& db,
                                               const std::vector<std::string>& types,
                                               int64_t fromSeq);

}  // namespace loom::kernel
