#include "loom/json/json.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/serializer.hpp>

#include <algorithm>

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

value parse(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  boost::json::parse_options options;
  options.max_depth = kMaxStoredDepth;
  value v = boost::json::parse(text, ec, {}, options);
  if (ec) {
    throw InvalidArgumentError(std::string(what) + ": not valid JSON (" + ec.message() + ")");
  }
  return v;
}

std::string_view kindName(const value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64: return "integer";
    case boost::json::kind::double_: return "number";
    case boost::json::kind::string: return "string";
    case boost::json::kind::array: return "array";
    case boost::json::kind::object: return "object";
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
