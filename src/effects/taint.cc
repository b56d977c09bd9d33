#include "loom/effects/taint.h"

#include <algorithm>

#include "loom/util/error.h"

namespace loom::effects {
namespace {

const json::object* wrapperOf(const json::value& v) {
  const auto* o = v.if_object();
  if (o == nullptr || o->size() != 2) return nullptr;
  const auto* marker = o->if_contains(kTaintKey);
  if (marker == nullptr || !marker->is_object() || !o->contains("value")) return nullptr;
  const auto* origin = marker->get_object().if_contains("origin");
  if (origin == nullptr || !origin->is_string()) return nullptr;
  return o;
}

template <typename Visit>
void walk(const json::value& v, const Visit& visit) {
  if (visit(v)) return;
  if (const auto* o = v.if_object()) {
    for (const auto& kv : *o) walk(kv.value(), visit);
  } else if (const auto* a = v.if_array()) {
    for (const auto& e : *a) walk(e, visit);
  }
}

// Every origin of a wrapper: "origin" first, then the strings of "origins" (when it is an
// array), without duplicates.
void addWrapperOrigins(const json::object& wrapper, std::vector<std::string>& out) {
  const json::object& marker = wrapper.at(kTaintKey).get_object();
  auto add = [&out](std::string_view origin) {
    if (std::find(out.begin(), out.end(), origin) == out.end()) out.emplace_back(origin);
  };
  add(marker.at("origin").get_string());
  const auto* more = marker.if_contains("origins");
  if (more == nullptr || !more->is_array()) return;
  for (const auto& o : more->get_array()) {
    if (o.is_string()) add(o.get_string());
  }
}

}  // namespace

json::value tainted(json::value value, std::string_view origin) {
  return json::object{{kTaintKey, json::object{{"origin", origin}}}, {"value", std::move(value)}};
}

json::value tainted(json::value value, const std::vector<std::string>& origins) {
  if (origins.empty()) throw InvalidArgumentError("tainted: name at least one origin");
  std::vector<std::string> distinct;
  for (const auto& o : origins) {
    if (std::find(distinct.begin(), distinct.end(), o) == distinct.end()) distinct.push_back(o);
  }
  if (distinct.size() == 1) return tainted(std::move(value), distinct.front());
  json::array all(distinct.begin(), distinct.end());
  return json::object{
      {kTaintKey, json::object{{"origin", distinct.front()}, {"origins", std::move(all)}}},
      {"value", std::move(value)}};
}

bool isTainted(const json::value& v) { return wrapperOf(v) != nullptr; }

std::optional<std::string> taintOrigin(const json::value& v) {
  const auto* o = wrapperOf(v);
  if (o == nullptr) return std::nullopt;
  return std::string(o->at(kTaintKey).at("origin").get_string());
}

const json::value& untainted(const json::value& v) {
  const auto* o = wrapperOf(v);
  return o ? o->at("value") : v;
}

bool containsTaint(const json::value& v) {
  bool found = false;
  walk(v, [&](const json::value& x) {
    if (found || isTainted(x)) found = true;
    return found;
  });
  return found;
}

std::vector<std::string> taintOrigins(const json::value& v) {
  std::vector<std::string> out;
  walk(v, [&](const json::value& x) {
    if (const auto* wrapper = wrapperOf(x)) addWrapperOrigins(*wrapper, out);
    return false;  // keep looking inside: wrappers may nest
  });
  return out;
}

}  // namespace loom::effects
