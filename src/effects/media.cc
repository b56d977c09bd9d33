#include "effects/media.h"

#include <algorithm>

namespace loom::effects {

bool isMediaResult(const json::value& result) {
  const auto* o = result.if_object();
  if (o == nullptr || o->size() != 1) return false;
  const auto* parts = o->if_contains("parts");
  if (parts == nullptr || !parts->is_array() || parts->get_array().empty()) return false;
  return std::all_of(
      parts->get_array().begin(), parts->get_array().end(),
      [](const json::value& p) { return p.is_object() && p.get_object().contains("type"); });
}

}  // namespace loom::effects
