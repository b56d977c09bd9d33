#include "toml_json.h"

#include <sstream>
#include <toml++/toml.h>

#include "loom/util/error.h"

namespace loom::providers {
namespace {

json::value convert(const toml::node& node) {
  if (const auto* t = node.as_table()) {
    json::object o;
    for (const auto& [k, v] : *t) o[std::string(k.str())] = convert(v);
    return o;
  }
  if (const auto* a = node.as_array()) {
    json::array out;
    for (const auto& v : *a) out.push_back(convert(v));
    return out;
  }
  if (const auto* s = node.as_string()) return json::value(s->get());
  if (const auto* i = node.as_integer()) return json::value(i->get());
  if (const auto* f = node.as_floating_point()) return json::value(f->get());
  if (const auto* b = node.as_boolean()) return json::value(b->get());
  std::ostringstream text;
  if (const auto* d = node.as_date_time()) text << d->get();
  else if (const auto* d2 = node.as_date()) text << d2->get();
  else if (const auto* t2 = node.as_time()) text << t2->get();
  return json::value(text.str());
}

}  // namespace

json::value tomlToJson(const std::string& text, const std::string& origin) {
  try {
    toml::table table = toml::parse(text, origin);
    return convert(table);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw InvalidArgumentError(origin + ":" + std::to_string(where.line) + ":" +
                               std::to_string(where.column) + ": " +
                               std::string(e.description()));
  }
}

}  // namespace loom::providers
