#include "content/claim_check_envelope.h"

#include "loom/content/content_store.h"
#include "loom/util/error.h"

namespace loom::content {

json::value toJson(const ClaimCheckEnvelope& e) {
  json::object o{{kClaimCheckKey, 1}, {"ref", contentRef(e.address)}, {"size", e.size}};
  if (e.digest) o["digest"] = *e.digest;
  if (e.retain) o["retain"] = true;
  return o;
}

bool looksLikeEnvelope(const json::value& v) {
  const auto* o = v.if_object();
  return o != nullptr && o->contains(kClaimCheckKey);
}

std::optional<EnvelopeView> readEnvelope(const json::value& v) {
  const auto* o = v.if_object();
  if (o == nullptr) return std::nullopt;
  const auto* marker = o->if_contains(kClaimCheckKey);
  if (marker == nullptr || !marker->is_int64() || marker->get_int64() != 1) return std::nullopt;
  const auto* ref = o->if_contains("ref");
  const auto* size = o->if_contains("size");
  if (ref == nullptr || size == nullptr || !size->is_int64() || size->get_int64() < 0) {
    return std::nullopt;
  }
  auto address = refAddressView(*ref);
  if (!address) return std::nullopt;
  for (const auto& kv : *o) {
    auto k = kv.key();
    if (k != kClaimCheckKey && k != "ref" && k != "size" && k != "digest" && k != "retain") {
      return std::nullopt;
    }
  }
  EnvelopeView e;
  e.address = *address;
  e.size = size->get_int64();
  e.digest = o->if_contains("digest");
  if (const auto* r = o->if_contains("retain")) {
    if (!r->is_bool()) return std::nullopt;
    e.retain = r->get_bool();
  }
  return e;
}

std::optional<ClaimCheckEnvelope> parseEnvelope(const json::value& v) {
  auto view = readEnvelope(v);
  if (!view) return std::nullopt;
  ClaimCheckEnvelope e;
  e.address = std::string(view->address);
  e.size = view->size;
  if (view->digest != nullptr) e.digest = *view->digest;
  e.retain = view->retain;
  return e;
}

namespace {

bool hasReservedMember(const json::object& o) {
  return o.contains(kClaimCheckKey) || o.contains(kContentRefKey) || o.contains(kInertDataKey);
}

}  // namespace

namespace {

[[noreturn]] void refuseTooDeep(std::string_view what) {
  throw InvalidArgumentError(std::string(what) + " nests more than " +
                             std::to_string(json::kMaxValueDepth) +
                             " levels of arrays and objects, the most Loom records; flatten "
                             "it (docs/spec/events.md, \"Nesting\")");
}

// makeInert and the depth check in one walk; `room` is how many levels may still nest. A
// subtree that gets wrapped is not walked again except to measure it (rare: a look-alike).
void admit(json::value& value, std::size_t room, std::string_view what) {
  auto* o = value.if_object();
  auto* a = o == nullptr ? value.if_array() : nullptr;
  if (o == nullptr && a == nullptr) return;
  if (room == 0) refuseTooDeep(what);
  if (o != nullptr && hasReservedMember(*o)) {
    if (json::depthOf(value, room) > room) refuseTooDeep(what);
    json::object wrapper(o->storage());
    wrapper.emplace(kInertDataKey, std::move(*o));
    value = std::move(wrapper);
    return;
  }
  if (o != nullptr) {
    for (auto& kv : *o) admit(kv.value(), room - 1, what);
  } else {
    for (auto& e : *a) admit(e, room - 1, what);
  }
}

}  // namespace

void makeInert(json::value& value) {
  if (auto* o = value.if_object()) {
    if (hasReservedMember(*o)) {
      json::object wrapper(o->storage());
      wrapper.emplace(kInertDataKey, std::move(*o));
      value = std::move(wrapper);
      return;
    }
    for (auto& kv : *o) makeInert(kv.value());
  } else if (auto* a = value.if_array()) {
    for (auto& e : *a) makeInert(e);
  }
}

void admitFromOutside(json::value& value, std::string_view what) {
  admit(value, json::kMaxValueDepth, what);
}

bool isInertData(const json::object& o) { return o.size() == 1 && o.contains(kInertDataKey); }

}  // namespace loom::content
