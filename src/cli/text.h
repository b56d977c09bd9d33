// Human-readable text for the `loom` command line: indented JSON and aligned tables.
// Pure functions; thread-safe.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "loom/json/json.h"
#include "loom/kernel/event.h"

namespace loom::cli {

// Compact JSON text for people and scripts to read: json::toText's, with doubles in plain
// decimal (6.012, not 6.012E0). Reads back to the same value.
std::string readableJson(const json::value& v);
// JSON text indented by two spaces per level, one member or element per line, doubles as in
// readableJson.
std::string prettyJson(const json::value& v);
// Writes `v` to `out` as it goes, pretty (prettyJson's layout) or compact (json::toText's),
// without building the whole text first (a 10,000-turn agent state is tens of MB).
void writeJson(std::ostream& out, const json::value& v, bool pretty);

// Rows of cells as columns padded to their widest cell (two spaces between columns, no
// trailing spaces), one line per row. Widths count UTF-8 code points.
std::string alignedTable(const std::vector<std::vector<std::string>>& rows);

// Human `loom log` and `loom follow` show at most this much of an event's data; --json all.
inline constexpr std::size_t kMaxEventDataBytes = 240;
// One event as `loom log` prints it: seq, time, type (padded so the data lines up) and its
// data, cut to kMaxEventDataBytes.
std::string eventLine(const kernel::Event& event);

// `text` cut to at most `maxBytes` bytes at a UTF-8 character boundary, with `suffix` appended
// when something was cut.
std::string truncateUtf8(std::string_view text, std::size_t maxBytes, std::string_view suffix);

}  // namespace loom::cli
