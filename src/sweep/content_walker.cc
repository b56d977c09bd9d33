#include "sweep/content_walker.h"

#include "content/claim_check_envelope.h"
#include "loom/content/content_store.h"
#include "loom/effects/taint.h"

namespace loom::sweep {

void visitCitedAddresses(const json::value& value,
                         const std::function<void(std::string_view)>& visit) {
  if (const auto* o = value.if_object()) {
    if (auto address = content::refAddressView(value)) {
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

const json::value* trustedPosition(const kernel::Event& event) {
  if (event.type != kernel::EventType::kStepCompleted) return nullptr;
  const auto* output = event.data.if_contains("output");
  return output == nullptr ? nullptr : &effects::untainted(*output);  // one wrapper at most
}

std::optional<content::EnvelopeView> trustedEnvelopeOf(const kernel::Event& event) {
  const json::value* position = trustedPosition(event);
  return position == nullptr ? std::nullopt : content::readEnvelope(*position);
}

void forEachRetainRoot(const kernel::Event& event,
                       const std::function<void(std::string_view)>& visit) {
  auto envelope = trustedEnvelopeOf(event);
  if (envelope && envelope->retain) visit(envelope->address);
}

std::vector<std::string> retainRootsOf(const kernel::Event& event) {
  std::vector<std::string> roots;
  forEachRetainRoot(event, [&](std::string_view address) { roots.emplace_back(address); });
  return roots;
}

}  // namespace loom::sweep
