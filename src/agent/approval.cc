#include "loom/agent/approval.h"

#include "loom/util/error.h"

namespace loom::agent {
namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw InvalidArgumentError("an approval decision must be " + std::string(kApprovalShape) + ": " +
                             what);
}

}  // namespace

bool isApprovalSignal(std::string_view signalName) {
  return signalName.substr(0, kApprovalSignalPrefix.size()) == kApprovalSignalPrefix;
}

ApprovalDecision readApprovalDecision(const json::value& payload) {
  const json::object* o = payload.if_object();
  if (o == nullptr) refuse("this payload is a JSON " + std::string(json::kindName(payload)));
  for (const auto& kv : *o) {
    if (kv.key() != "approved" && kv.key() != "reason") {
      refuse("it has the unknown key \"" + std::string(kv.key()) + "\"");
    }
  }
  const json::value* approved = o->if_contains("approved");
  if (approved == nullptr) refuse("\"approved\" is missing");
  if (!approved->is_bool()) {
    refuse("\"approved\" is a JSON " + std::string(json::kindName(*approved)) +
           ", not true or false");
  }
  ApprovalDecision decision{approved->get_bool(), std::nullopt};
  if (const json::value* reason = o->if_contains("reason")) {
    if (!reason->is_string()) {
      refuse("\"reason\" is a JSON " + std::string(json::kindName(*reason)) + ", not a string");
    }
    decision.reason = std::string(reason->get_string());
  }
  return decision;
}

}  // namespace loom::agent
