#include "text.h"

#include <algorithm>
#include <boost/json/serializer.hpp>
#include <ostream>

namespace loom::cli {
namespace {

// Appends the pretty text of `v`; when `sink` is set, hands it what is written so far whenever
// that passes 64 KiB.
void appendPretty(std::string& out, const json::value& v, int depth, std::ostream* sink = nullptr) {
  if (sink != nullptr && out.size() >= (64u << 10)) {
    sink->write(out.data(), static_cast<std::streamsize>(out.size()));
    out.clear();
  }
  auto newline = [&](int level) {
    out += '\n';
    out.append(static_cast<std::size_t>(level) * 2, ' ');
  };
  if (const auto* o = v.if_object(); o && !o->empty()) {
    out += '{';
    bool first = true;
    for (const auto& member : *o) {
      if (!first) out += ',';
      first = false;
      newline(depth + 1);
      out += json::toText(json::value(member.key())) + ": ";
      appendPretty(out, member.value(), depth + 1, sink);
    }
    newline(depth);
    out += '}';
  } else if (const auto* a = v.if_array(); a && !a->empty()) {
    out += '[';
    bool first = true;
    for (const auto& element : *a) {
      if (!first) out += ',';
      first = false;
      newline(depth + 1);
      appendPretty(out, element, depth + 1, sink);
    }
    newline(depth);
    out += ']';
  } else {
    out += json::toText(v);
  }
}

std::size_t codePoints(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string prettyJson(const json::value& v) {
  std::string out;
  appendPretty(out, v, 0);
  return out;
}

void writeJson(std::ostream& out, const json::value& v, bool pretty) {
  if (pretty) {
    std::string buffer;
    appendPretty(buffer, v, 0, &out);
    out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    return;
  }
  boost::json::serializer serializer;
  serializer.reset(&v);
  char chunk[64 << 10];
  while (!serializer.done()) {
    auto text = serializer.read(chunk, sizeof chunk);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
}

std::string alignedTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], codePoints(row[i]));
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += "  ";
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - codePoints(row[i]), ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string truncateUtf8(std::string_view text, std::size_t maxBytes, std::string_view suffix) {
  if (text.size() <= maxBytes) return std::string(text);
  std::size_t cut = maxBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + std::string(suffix);
}

}  // namespace loom::cli
