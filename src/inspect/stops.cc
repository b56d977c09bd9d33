#include "inspect/stops.h"

#include "loom/util/clock.h"

namespace loom::inspect {

json::object stopsJson(const std::vector<middleware::KillSwitchEntry>& stops,
                       std::optional<bool> changed) {
  json::array list;
  for (const auto& s : stops) {
    list.push_back(json::object{{"effectId", s.effectId}, {"at", formatTimestamp(s.atMillis)}});
  }
  json::object o;
  if (changed) o["changed"] = *changed;
  o["stops"] = std::move(list);
  return o;
}

}  // namespace loom::inspect
