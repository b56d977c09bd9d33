#include "loom/json/json.h"

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/serializer.hpp>
#include <charconv>
#include <cmath>
#include <unordered_set>
#include <vector>

#include "loom/util/error.h"

namespace loom::json {

std::string toText(const value& v) { return boost::json::serialize(v); }

std::size_t textBytes(const value& v) {
  boost::json::serializer sr;
  sr.reset(&v);
  char buf[4096];
  std::size_t total = 0;
  while (!sr.done()) total += sr.read(buf, sizeof buf).size();
  return total;
}

std::size_t appendText(std::string& out, const value& v) {
  boost::json::serializer sr;
  sr.reset(&v);
  std::size_t start = out.size();
  while (!sr.done()) {
    std::size_t used = out.size();
    std::size_t room = std::max<std::size_t>(64, out.capacity() - used);
    out.resize(used + room);
    std::size_t n = sr.read(out.data() + used, room).size();
    out.resize(used + n);
  }
  return out.size() - start;
}

std::size_t appendQuoted(std::string& out, std::string_view s) {
  boost::json::string_view sv(s.data(), s.size());
  boost::json::serializer sr;
  sr.reset(sv);
  std::size_t start = out.size();
  while (!sr.done()) {
    std::size_t used = out.size();
    std::size_t room = std::max<std::size_t>(s.size() + 8, out.capacity() - used);
    out.resize(used + room);
    std::size_t n = sr.read(out.data() + used, room).size();
    out.resize(used + n);
  }
  return out.size() - start;
}

std::size_t depthOf(const value& v, std::size_t limit) {
  if (limit == 0) return v.is_object() || v.is_array() ? 1 : 0;
  std::size_t deepest = 0;
  if (const auto* o = v.if_object()) {
    for (const auto& kv : *o) deepest = std::max(deepest, depthOf(kv.value(), limit - 1));
    return deepest + 1;
  }
  if (const auto* a = v.if_array()) {
    for (const auto& e : *a) deepest = std::max(deepest, depthOf(e, limit - 1));
    return deepest + 1;
  }
  return 0;
}

namespace {

// The object members a JSON text spells: one ':' outside string literals per member.
std::size_t spelledMembers(std::string_view text) {
  std::size_t colons = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == ':') {
      ++colons;
    }
  }
  return colons;
}

// What a parsed value holds that parse() checks: the members of every object, and the
// non-integer numbers in document order (an object keeps its members in text order).
struct Census {
  std::size_t members = 0;
  std::vector<double*> doubles;
};

void takeCensus(value& v, Census& census) {
  if (auto* o = v.if_object()) {
    census.members += o->size();
    for (auto& kv : *o) takeCensus(kv.value(), census);
  } else if (auto* a = v.if_array()) {
    for (auto& e : *a) takeCensus(e, census);
  } else if (auto* d = v.if_double()) {
    census.doubles.push_back(d);
  }
}

// A basic_parser handler that does nothing; the scans below override what they read.
struct NullHandler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);
  using ec_t = boost::system::error_code;
  using sv = boost::json::string_view;

  bool on_document_begin(ec_t&) { return true; }
  bool on_document_end(ec_t&) { return true; }
  bool on_array_begin(ec_t&) { return true; }
  bool on_array_end(std::size_t, ec_t&) { return true; }
  bool on_object_begin(ec_t&) { return true; }
  bool on_object_end(std::size_t, ec_t&) { return true; }
  bool on_string_part(sv, std::size_t, ec_t&) { return true; }
  bool on_string(sv, std::size_t, ec_t&) { return true; }
  bool on_key_part(sv, std::size_t, ec_t&) { return true; }
  bool on_key(sv, std::size_t, ec_t&) { return true; }
  bool on_number_part(sv, ec_t&) { return true; }
  bool on_int64(int64_t, sv, ec_t&) { return true; }
  bool on_uint64(uint64_t, sv, ec_t&) { return true; }
  bool on_double(double, sv, ec_t&) { return true; }
  bool on_bool(bool, ec_t&) { return true; }
  bool on_null(ec_t&) { return true; }
  bool on_comment_part(sv, ec_t&) { return true; }
  bool on_comment(sv, ec_t&) { return true; }
};

// Finds the first key spelled twice in one object: the slow path, run once a parse has shown
// the text has one.
struct DuplicateKeyFinder : NullHandler {
  std::vector<std::unordered_set<std::string>> open;  // the keys of each open object
  std::string key;
  std::optional<std::string> duplicate;

  bool on_object_begin(ec_t&) {
    open.emplace_back();
    return true;
  }
  bool on_object_end(std::size_t, ec_t&) {
    open.pop_back();
    return true;
  }
  bool on_key_part(sv s, std::size_t, ec_t&) {
    key.append(s.data(), s.size());
    return true;
  }
  bool on_key(sv s, std::size_t, ec_t& ec) {
    key.append(s.data(), s.size());
    if (!open.back().insert(key).second) {
      duplicate = key;
      ec = boost::json::error::syntax;  // stop here: found
      return false;
    }
    key.clear();
    return true;
  }
};

// The text of every non-integer number, in document order.
struct DoubleTexts : NullHandler {
  std::string part;
  std::vector<std::string> texts;

  bool on_number_part(sv s, ec_t&) {
    part.append(s.data(), s.size());
    return true;
  }
  bool on_int64(int64_t, sv, ec_t&) {
    part.clear();
    return true;
  }
  bool on_uint64(uint64_t, sv, ec_t&) {
    part.clear();
    return true;
  }
  bool on_double(double, sv s, ec_t&) {
    part.append(s.data(), s.size());
    texts.push_back(std::move(part));
    part.clear();
    return true;
  }
};

template <typename Handler>
Handler scan(std::string_view text, const boost::json::parse_options& options) {
  boost::json::basic_parser<Handler> parser(options);
  boost::system::error_code ec;
  parser.write_some(false, text.data(), text.size(), ec);
  return std::move(parser.handler());
}

// Boost.JSON 1.81 may round a long decimal to a neighbour of the nearest double, so a number
// would not survive a write and a read. Each one is read again from its text, correctly rounded
// (std::from_chars); a text out of double's range keeps Boost's reading.
void roundDoublesExactly(std::string_view text, const boost::json::parse_options& options,
                         const std::vector<double*>& doubles) {
  std::vector<std::string> texts = scan<DoubleTexts>(text, options).texts;
  if (texts.size() != doubles.size()) return;  // cannot happen: the same text, parsed twice
  for (std::size_t i = 0; i < texts.size(); ++i) {
    double exact = 0;
    const std::string& t = texts[i];
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), exact);
    if (ec == std::errc() && end == t.data() + t.size()) *doubles[i] = exact;
  }
}

}  // namespace

namespace {

value parseWith(std::string_view text, std::string_view what, bool storedText) {
  boost::system::error_code ec;
  boost::json::parse_options options;
  options.max_depth = kMaxStoredDepth;
  options.allow_invalid_utf8 = storedText;
  value v = boost::json::parse(text, ec, {}, options);
  if (ec) {
    throw InvalidArgumentError(std::string(what) + ": not valid JSON (" + ec.message() + ")");
  }
  // Boost.JSON keeps the last of two equal keys; a reader that kept the first would see another
  // value, so a text that spells a key twice in one object is refused.
  Census census;
  takeCensus(v, census);
  if (census.members != spelledMembers(text)) {
    std::string key = scan<DuplicateKeyFinder>(text, options).duplicate.value_or("?");
    if (key.size() > 80) key = key.substr(0, 80) + "...";
    std::string quoted;
    appendQuoted(quoted, key);
    throw InvalidArgumentError(std::string(what) + ": the key " + quoted +
                               " appears twice in one object; give each key once");
  }
  if (!census.doubles.empty()) roundDoublesExactly(text, options, census.doubles);
  for (const double* d : census.doubles) {
    if (!std::isfinite(*d)) {  // 1e400: no double holds it, and JSON has no Infinity to write
      throw InvalidArgumentError(std::string(what) +
                                 ": a number is out of the range of a double (about 1.8e308); "
                                 "write it as a string");
    }
  }
  return v;
}

}  // namespace

value parse(std::string_view text, std::string_view what) { return parseWith(text, what, false); }

value parseStored(std::string_view text, std::string_view what) {
  return parseWith(text, what, true);
}

std::string_view kindName(const value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return "null";
    case boost::json::kind::bool_:
      return "boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
      return "integer";
    case boost::json::kind::double_:
      return "number";
    case boost::json::kind::string:
      return "string";
    case boost::json::kind::array:
      return "array";
    case boost::json::kind::object:
      return "object";
  }
  return "unknown";
}

const value& require(const object& o, std::string_view key) {
  const value* v = o.if_contains(key);
  if (v == nullptr) throw InvalidArgumentError("missing field '" + std::string(key) + "'");
  return *v;
}

const boost::json::string& requireString(const object& o, std::string_view key) {
  const value& v = require(o, key);
  if (!v.is_string()) {
    throw InvalidArgumentError("field '" + std::string(key) + "' must be a string, not " +
                               std::string(kindName(v)));
  }
  return v.get_string();
}

int64_t requireInt(const object& o, std::string_view key) {
  const value& v = require(o, key);
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64() && v.get_uint64() <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(v.get_uint64());
  }
  throw InvalidArgumentError("field '" + std::string(key) + "' must be an integer, not " +
                             std::string(kindName(v)));
}

const object& requireObject(const object& o, std::string_view key) {
  const value& v = require(o, key);
  if (!v.is_object()) {
    throw InvalidArgumentError("field '" + std::string(key) + "' must be an object, not " +
                               std::string(kindName(v)));
  }
  return v.get_object();
}

std::optional<std::string> optionalString(const object& o, std::string_view key) {
  const value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return std::string(requireString(o, key));
}

std::optional<int64_t> optionalInt(const object& o, std::string_view key) {
  const value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return requireInt(o, key);
}

}  // namespace loom::json
