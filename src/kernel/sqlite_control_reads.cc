#include "sqlite_control_reads.h"

#include <algorithm>
#include <optional>

#include "control_types.h"
#include "log_check.h"
#include "sqlite_schema.h"

namespace loom::kernel {

using sqlite::StatementUse;

std::vector<ControlEvent> controlEventsOfTypes(sqlite::Db& db,
                                               const std::vector<std::string>& types,
                                               int64_t fromSeq) {
  // One index range per wanted type, and one per gap between the known types: the rows
  // indexed under no known type ('?' for a body that does not read, or a type a flipped byte
  // changed) throw below. The cost grows with the rows returned, not with the log.
  static const std::string from = std::string("SELECT seq, body, checksum FROM control WHERE (") +
                                  schema::kControlTypeExpression + ") ";
  static const std::string equal = from + "= ?1 AND seq >= ?3";
  // `+seq`: the gaps are found through the index of types, never by a scan of the log from seq
  // (which the planner would otherwise pick for an open range).
  static const std::string below = from + "< ?1 AND +seq >= ?3";
  static const std::string between =
      from + "> ?1 AND (" + schema::kControlTypeExpression + ") < ?2 AND +seq >= ?3";
  static const std::string above = from + "> ?1 AND +seq >= ?3";
  static const std::vector<std::string> known = knownControlEventTypes();
  struct Range {
    const std::string* sql;
    std::string lo, hi;
  };
  std::vector<Range> ranges;
  for (const auto& type : types) ranges.push_back({&equal, type, ""});
  ranges.push_back({&below, known.front(), ""});
  for (std::size_t i = 0; i + 1 < known.size(); ++i) {
    ranges.push_back({&between, known[i], known[i + 1]});
  }
  ranges.push_back({&above, known.back(), ""});
  std::vector<ControlEvent> out;
  for (const Range& range : ranges) {
    StatementUse select(db.prepare(range.sql->c_str()));
    select->bind(1, std::string_view(range.lo));
    if (range.sql == &between) select->bind(2, std::string_view(range.hi));
    select->bind(3, fromSeq);
    while (select->step("read the control log")) {
      int64_t seq = select->int64(0);
      verifyControlRowChecksum(
          seq, select->text(1),
          select->isNull(2) ? std::nullopt : std::optional<int64_t>(select->int64(2)));
      out.push_back(controlEventFromText(seq, select->text(1)));  // throws for an unknown type
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

}  // namespace loom::kernel
