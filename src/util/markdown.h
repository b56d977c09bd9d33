// Text in a cell of a generated Markdown table (docs/config.md, docs/cli.md, the tables the
// benchmarks print): a `|` is escaped and a line break becomes a space, so a cell never ends
// its row; a number is written with a fixed count of decimals. Pure; thread-safe.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace loom {

inline std::string markdownCell(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

// `v` with exactly `decimals` digits after the point ("0.810"), as a table cell shows it.
inline std::string fixedDecimals(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace loom
