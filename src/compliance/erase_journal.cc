#include "erase_journal.h"

#include <algorithm>

#include "loom/compliance/subject.h"
#include "loom/content/content_store.h"
#include "loom/util/error.h"

namespace loom::compliance::detail {
namespace {

std::vector<std::string> addressesOf(const json::object& data,
                                     std::string_view member = "addresses") {
  const json::value& list = json::require(data, member);
  const std::string name = "'" + std::string(member) + "'";
  if (!list.is_array()) throw InvalidArgumentError(name + " is not an array");
  std::vector<std::string> out;
  out.reserve(list.get_array().size());
  for (const auto& a : list.get_array()) {
    if (!a.is_string() || !content::isValidAddress(std::string_view(a.get_string()))) {
      throw InvalidArgumentError(name + " holds something that is not a content address");
    }
    out.emplace_back(a.get_string());
  }
  return out;
}

}  // namespace

std::optional<ErasureRecord> latestErasure(const kernel::EventStore& events,
                                           const std::string& subject) {
  std::optional<ErasureRecord> latest;
  for (const auto& e : events.readControlOfTypes(
           {std::string(kIntendedType), std::string(kShreddedType), std::string(kDeletedType)})) {
    bool intended = e.type == kIntendedType, shredded = e.type == kShreddedType,
         deleted = e.type == kDeletedType;
    if (!intended && !shredded && !deleted) continue;
    try {
      if (subjectOf(e.data) != subject) continue;  // subjectHex names a subject not UTF-8
      if (intended) {
        latest = ErasureRecord{};
        latest->intent = e.seq;
        latest->addresses = addressesOf(e.data);
        latest->touchCutoff = json::optionalInt(e.data, "touchCutoff");
        if (e.data.contains("kept")) latest->kept = addressesOf(e.data, "kept");
        if (!latest->addresses.empty() && !latest->touchCutoff) {
          throw InvalidArgumentError("'touchCutoff' is missing while 'addresses' is not empty");
        }
      } else if (latest && shredded) {
        latest->shredJournaled = true;
      } else if (latest && deleted && json::requireInt(e.data, "intent") == latest->intent) {
        latest->finished = ContentDeleted{json::requireInt(e.data, "deleted"),
                                          json::requireInt(e.data, "retained"),
                                          json::optionalInt(e.data, "missing").value_or(0),
                                          json::optionalInt(e.data, "datedAhead").value_or(0),
                                          json::optionalInt(e.data, "datedAheadUntil").value_or(0)};
      }
    } catch (const InvalidArgumentError& bad) {
      throw CorruptEventError("(control log)", e.seq, e.type + ": " + bad.what());
    }
  }
  return latest;
}

int64_t journal(kernel::EventStore& events, std::string_view type, json::object data,
                int64_t atMillis) {
  return kernel::appendControlAtEnd(
      events, kernel::ControlEvent{0, std::string(type), atMillis, std::move(data)});
}

std::map<std::string, int64_t, std::less<>> shredTimes(const kernel::EventStore& events) {
  std::map<std::string, int64_t, std::less<>> at;
  for (const auto& e : events.readControlOfTypes({std::string(kShreddedType)})) {
    std::string subject;
    try {
      subject = subjectOf(e.data);
    } catch (const InvalidArgumentError&) {
      continue;  // names no subject: marks none erased (latestErasure refuses such a row)
    }
    int64_t& t = at[subject];
    t = std::max(t, e.atMillis);
  }
  return at;
}

}  // namespace loom::compliance::detail
