#include "pg_control_reads.h"

#include <algorithm>

#include "kernel/control_types.h"
#include "kernel/log_check.h"
#include "loom/util/error.h"
#include "pg_schema.h"

namespace loom::postgres {

using kernel::ControlEvent;

std::vector<ControlEvent> controlEvents(Pool& pool, int64_t fromSeq) {
  Result r = withConnection(pool, [&](Connection& conn) {
    return conn.exec("SELECT seq, body, checksum FROM control WHERE seq >= $1 ORDER BY seq",
                     {Param::int64(fromSeq)}, "read the control log");
  });
  std::vector<ControlEvent> out;
  int64_t expected = fromSeq > 1 ? fromSeq : 1;
  for (int row = 0; row < r.rows(); ++row) {
    int64_t seq = r.int64(row, 0);
    kernel::verifyControlRowChecksum(seq, r.text(row, 1), r.optionalInt64(row, 2));
    if (seq != expected++) {
      throw CorruptEventError("(control log)", expected - 1,
                              "the row is missing (the log goes on at seq " + std::to_string(seq) +
                                  "); restore the database from a backup");
    }
    out.push_back(kernel::controlEventFromText(seq, r.text(row, 1)));
  }
  return out;
}

std::vector<ControlEvent> controlEventsOfTypes(Pool& pool, const std::vector<std::string>& types,
                                               int64_t fromSeq) {
  // Through control_by_type: the wanted types, and every gap between the known types (rows
  // indexed under no known type: '?' for a row whose envelope does not start as Loom writes it,
  // or a type a flipped byte changed), which are parsed here and refused. A row that reads and
  // is of a type not wanted is left out.
  static const std::string sql = [] {
    const std::string t = LOOM_PG_CONTROL_TYPE;
    std::vector<std::string> known = kernel::knownControlEventTypes();
    std::string where =
        t + " = ANY(string_to_array($1, ',')) OR " + t + " < '" + known.front() + "'";
    for (std::size_t i = 0; i + 1 < known.size(); ++i) {
      where += " OR (" + t + " > '" + known[i] + "' AND " + t + " < '" + known[i + 1] + "')";
    }
    where += " OR " + t + " > '" + known.back() + "'";
    return "SELECT seq, body, checksum FROM control WHERE (" + where +
           ") AND seq >= $2 ORDER BY seq";
  }();
  std::string wanted;
  for (const auto& type : types) wanted += (wanted.empty() ? "" : ",") + type;
  Result r = withConnection(pool, [&](Connection& conn) {
    return conn.exec(sql.c_str(), {Param::text(wanted), Param::int64(fromSeq)},
                     "read the control log by type");
  });
  std::vector<ControlEvent> out;
  for (int row = 0; row < r.rows(); ++row) {
    int64_t seq = r.int64(row, 0);
    kernel::verifyControlRowChecksum(seq, r.text(row, 1), r.optionalInt64(row, 2));
    ControlEvent event = kernel::controlEventFromText(seq, r.text(row, 1));
    if (std::find(types.begin(), types.end(), event.type) != types.end()) {
      out.push_back(std::move(event));
    }
  }
  return out;
}

}  // namespace loom::postgres
