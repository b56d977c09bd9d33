#include "text.h"

#include <algorithm>
#include <boost/json/serializer.hpp>
#include <charconv>
#include <cmath>
#include <ostream>

#include "loom/util/clock.h"

namespace loom::cli {
namespace {

// A scalar's text; a double in plain decimal ("6.012", not Boost's "6.012E0"): the shortest
// text that reads back as the same double.
void appendScalar(std::string& out, const json::value& v) {
  if (!v.is_double()) {
    out += json::toText(v);
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.get_double());
  if (ec != std::errc() || !std::isfinite(v.get_double())) {
    out += json::toText(v);
    return;
  }
  out.append(buf, end);
}

void appendCompact(std::string& out, const json::value& v) {
  if (const auto* o = v.if_object()) {
    out += '{';
    for (const auto& member : *o) {
      if (out.back() != '{') out += ',';
      json::appendQuoted(out, member.key());
      out += ':';
      appendCompact(out, member.value());
    }
    out += '}';
  } else if (const auto* a = v.if_array()) {
    out += '[';
    for (const auto& element : *a) {
      if (out.back() != '[') out += ',';
      appendCompact(out, element);
    }
    out += ']';
  } else {
    appendScalar(out, v);
  }
}

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
    appendScalar(out, v);
  }
}

std::size_t codePoints(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string readableJson(const json::value& v) {
  std::string out;
  appendCompact(out, v);
  return out;
}

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

std::string eventLine(const kernel::Event& event) {
  constexpr std::size_t kTypeWidth = 19;  // "EXECUTION_COMPLETED": the data column lines up
  std::string type(kernel::eventTypeName(event.type));
  type.resize(std::max(type.size(), kTypeWidth), ' ');
  return std::to_string(event.seq) + "  " + formatTimestamp(event.atMillis) + "  " + type + "  " +
         truncateUtf8(json::toText(event.data), kMaxEventDataBytes, " ...");
}

}  // namespace loom::cli
