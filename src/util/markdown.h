// Text in a cell of a generated Markdown table (docs/config.md, docs/cli.md): a `|` is
// escaped and a line break becomes a space, so a cell never ends its row. Pure; thread-safe.
#pragma once

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

}  // namespace loom
