// Worker presence rows (lease_rules.h): the checks and the stored form of a version list.
#include <boost/json/serialize.hpp>

#include "lease_rules.h"
#include "loom/json/json.h"
#include "loom/util/error.h"

namespace loom::kernel {

void validatePresence(const WorkerPresence& presence, int64_t ttlMillis) {
  if (presence.owner.id.empty()) {
    throw InvalidArgumentError("a worker's presence needs its owner id");
  }
  if (ttlMillis < 0) {
    throw InvalidArgumentError("a worker's presence ttl is " + std::to_string(ttlMillis) +
                               " ms; it must be 0 (gone now) or more");
  }
}

std::string versionsText(const std::vector<std::string>& versions) {
  json::array out;
  for (const auto& v : versions) out.emplace_back(v);
  return boost::json::serialize(out);
}

std::vector<std::string> versionsFromText(std::string_view text, const std::string& ownerId) {
  std::vector<std::string> out;
  try {
    json::value v = json::parse(text, "a worker's code versions");
    if (!v.is_array()) throw InvalidArgumentError("not a JSON array");
    for (const auto& e : v.get_array()) {
      if (!e.is_string()) throw InvalidArgumentError("an element is not a string");
      out.emplace_back(e.get_string());
    }
  } catch (const InvalidArgumentError& e) {
    throw DataLossError("the presence row of worker '" + ownerId +
                        "' does not read (its code versions: " + e.what() +
                        "); it was changed outside Loom: delete the row, the worker says it "
                        "again");
  }
  return out;
}

}  // namespace loom::kernel
