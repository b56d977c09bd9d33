// Durability names (sqlite_event_store.h): "full" and "normal", as config and flags spell them.
#include "loom/kernel/sqlite_event_store.h"
#include "loom/util/error.h"

namespace loom::kernel {

Durability durabilityFromName(std::string_view name) {
  if (name == "full") return Durability::kFull;
  if (name == "normal") return Durability::kNormal;
  throw InvalidArgumentError("unknown durability '" + std::string(name) +
                             "': expected \"full\" or \"normal\"");
}

std::string_view durabilityName(Durability durability) {
  return durability == Durability::kFull ? "full" : "normal";
}

}  // namespace loom::kernel
