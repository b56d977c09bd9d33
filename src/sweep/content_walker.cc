#include "sweep/content_walker.h"

#include "content/claim_check_envelope.h"
#include "loom/content/content_store.h"
#include "loom/effects/taint.h"

namespace loom::sweep {

namespace {

// The address of a {"__loomContent": H} object as a view into it, without allocating.
std::optional<std::string_view> refView(const json::object& o) {
  if (o.size() != 1) return std::nullopt;
  const auto* h = o.if_contains(content::kContentRefKey);
  if (h == nullptr || !h->is_string()) return std::nullopt;
  std::string_view address(h->get_string().data(), h->get_string().size());
  if (!content::isValidAddress(address)) return std::nullopt;
  return address;
}

}  // namespace

void visitCitedAddresses(const json::value& value,
                         const std::function<void(std::string_view)>& visit) {
  if (const auto* o = value.if_object()) {
    if (auto address = refView(*o)) {
      visit(*address);
      return;
    }
    if (content::isInertData(*o)) return;  // handed in from outside: cites nothing
    for (const auto& kv : *o) visitCitedAddresses(kv.value(), visit);
  } else if (const auto* a = value.if_array()) {
    for (const auto& e : *a) visitCitedAddresses(e, visit);
  }
}

void visitCitedAddresses(const kernel::Event& event,
                         const std::function<void(std::string_view)>& visit) {
  for (const auto& kv : event.data) visitCitedAddresses(kv.value(), visit);
}

std::optional<json::value> topLevelEnvelopeOf(const kernel::Event& event) {
  if (event.type != kernel::EventType::kStepCompleted) return std::nullopt;
  const auto* output = event.data.if_contains("output");
  if (output == nullptr) return std::nullopt;
  const json::value& inner = effects::untainted(*output);  // through one wrapper at most
  if (!content::parseEnvelope(inner)) return std::nullopt;
  return inner;
}

void forEachRetainRoot(const kernel::Event& event,
                       const std::function<void(std::string_view)>& visit) {
  if (event.type != kernel::EventType::kStepCompleted) return;
  const auto* output = event.data.if_contains("output");
  if (output == nullptr) return;
  const auto* o = effects::untainted(*output).if_object();
  if (o == nullptr) return;
  const auto* retain = o->if_contains("retain");
  if (retain == nullptr || !retain->is_bool() || !retain->get_bool()) return;
  // Only a well-formed envelope is trusted (parseEnvelope's rules, without its copies).
  const auto* marker = o->if_contains(content::kClaimCheckKey);
  const auto* size = o->if_contains("size");
  const auto* ref = o->if_contains("ref");
  if (marker == nullptr || !marker->is_int64() || marker->get_int64() != 1 || size == nullptr ||
      !size->is_int64() || size->get_int64() < 0 || ref == nullptr || !ref->is_object()) {
    return;
  }
  for (const auto& kv : *o) {
    auto k = kv.key();
    if (k != content::kClaimCheckKey && k != "ref" && k != "size" && k != "digest" &&
        k != "retain") {
      return;
    }
  }
  if (auto address = refView(ref->get_object())) visit(*address);
}

std::vector<std::string> retainRootsOf(const kernel::Event& event) {
  auto envelope = topLevelEnvelopeOf(event);
  if (!envelope) return {};
  auto parsed = content::parseEnvelope(*envelope);
  if (!parsed->retain) return {};
  return {parsed->address};
}

}  // namespace loom::sweep
