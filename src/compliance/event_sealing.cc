#include "compliance/event_sealing.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

#include "aead.h"
#include "loom/kernel/usage.h"
#include "loom/util/error.h"

namespace loom::compliance {
namespace {

constexpr std::string_view kEventDomain = "loom.event.v1";

// Execution id, seq and type; for EXECUTION_STARTED also its clear workflow, subject and code
// version (when it has one: a payload sealed before EVENT_SCHEMA 3 kept none clear), so the
// metadata kept in clear cannot be changed, added or removed without the payload failing to
// open. For CODE_UPGRADED, its clear code version (EVENT_SCHEMA 4); for a model step, its
// clear usage (EVENT_SCHEMA 5).
std::string eventAd(const std::string& executionId, const kernel::Event& event,
                    const json::object& clear) {
  std::string seq = std::to_string(event.seq);
  std::string_view type = kernel::eventTypeName(event.type);
  if (event.type == kernel::EventType::kCodeUpgraded) {
    const auto* v = clear.if_contains("codeVersion");
    std::string version = v != nullptr && v->is_string() ? std::string(v->get_string()) : "";
    return detail::associatedData(kEventDomain, {executionId, seq, type, "v" + version});
  }
  if (const auto* u = clear.if_contains("usage"); u && u->is_object()) {  // EVENT_SCHEMA 5
    return detail::associatedData(
        kEventDomain, {executionId, seq, type, "u" + kernel::stepUsageText(u->get_object())});
  }
  if (event.type != kernel::EventType::kExecutionStarted) {
    return detail::associatedData(kEventDomain, {executionId, seq, type});
  }
  std::string workflow;
  if (const auto* w = clear.if_contains("workflow"); w && w->is_string()) {
    workflow = std::string(w->get_string());
  }
  std::string subject = "-";  // none
  if (const auto* s = clear.if_contains("subject"); s && s->is_string()) {
    subject = "s" + std::string(s->get_string());
  }
  if (const auto* v = clear.if_contains("codeVersion"); v && v->is_string()) {
    return detail::associatedData(kEventDomain, {executionId, seq, type, workflow, subject,
                                                 "v" + std::string(v->get_string())});
  }
  return detail::associatedData(kEventDomain, {executionId, seq, type, workflow, subject});
}

std::string memberString(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) {
    throw InvalidArgumentError("sealed payload lacks the string '" + std::string(key) + "'");
  }
  return std::string(v->get_string());
}

}  // namespace

std::optional<std::string> sealingSubject(const std::optional<std::string>& subject,
                                          const SealingOptions& options) {
  if (subject) return subject;
  if (options.sealSubjectless) return std::string(kSystemSubject);
  return std::nullopt;
}

json::object sealDocument(std::string_view plaintext, const std::string& subject,
                          const DataKey& key, const std::string& ad) {
  detail::Nonce nonce = detail::randomNonce();
  std::string ciphertext = detail::seal(key.bytes(), nonce, plaintext, ad);
  return json::object{{"subject", subject},
                      {"keyId", key.id()},
                      {"nonce", detail::toBase64(std::string_view(
                                    reinterpret_cast<const char*>(nonce.data()), nonce.size()))},
                      {"ciphertext", detail::toBase64(ciphertext)}};
}

kernel::Event sealEvent(const std::string& executionId, kernel::Event event,
                        const std::string& subject, const DataKey& key) {
  if (kernel::isSealed(event.data) || kernel::isErased(event.data)) {
    throw InvalidArgumentError("event " + std::string(kernel::eventTypeName(event.type)) +
                               " for '" + executionId +
                               "' already has a sealed or erased payload; only the sealing "
                               "store writes those");
  }
  json::object clear;
  if (event.type == kernel::EventType::kExecutionStarted) {
    if (const auto* w = event.data.if_contains("workflow")) clear["workflow"] = *w;
    if (const auto* s = event.data.if_contains("subject")) clear["subject"] = *s;
  }
  // Kept clear so a worker claims only runs of its own code without keys (EVENT_SCHEMA 3; an
  // upgrade's, EVENT_SCHEMA 4).
  if (event.type == kernel::EventType::kExecutionStarted ||
      event.type == kernel::EventType::kCodeUpgraded) {
    if (const auto* v = event.data.if_contains("codeVersion"); v && v->is_string()) {
      clear["codeVersion"] = *v;
    }
  }
  // A model step's tokens and cost: totals and budgets without keys (EVENT_SCHEMA 5).
  if (event.type == kernel::EventType::kStepCompleted) {
    if (const auto* u = event.data.if_contains("usage")) clear["usage"] = *u;
  }
  std::string ad = eventAd(executionId, event, clear);
  std::string plaintext = boost::json::serialize(event.data);
  clear[kernel::kSealedKey] = sealDocument(plaintext, subject, key, ad);
  event.data = std::move(clear);
  return event;
}

const std::optional<DataKey>& EventUnsealer::key(const std::string& subject,
                                                 const std::string& keyId) {
  auto slot = std::make_pair(subject, keyId);
  auto it = cache_.find(slot);
  if (it != cache_.end()) return it->second;
  std::optional<DataKey> found = keys_.find(subject, keyId);
  // Absent is "erased" only when the subject was shredded. Otherwise the row names a key that
  // never existed (a damaged key id) or the key store is not the one the log was sealed with
  // (a lost or swapped keys file): fail closed rather than call everything erased.
  if (!found && !keys_.wasShredded(subject)) {
    throw InvalidArgumentError("the sealed payload names key " + keyId + " of subject '" +
                               subject +
                               "', which the key store neither has nor shredded: the row is "
                               "damaged, or this is not the key store the log was sealed with "
                               "(check security.keys and the home's key store)");
  }
  return cache_.emplace(std::move(slot), std::move(found)).first->second;
}

kernel::Event EventUnsealer::unseal(const std::string& executionId, const kernel::Event& event) {
  if (!kernel::isSealed(event.data)) return event;
  kernel::Event out;
  out.seq = event.seq;
  out.type = event.type;
  out.atMillis = event.atMillis;
  try {
    const auto& body = event.data.at(kernel::kSealedKey).get_object();
    std::optional<std::string> plaintext =
        openOrInvalid(body, eventAd(executionId, event, event.data));
    if (!plaintext) {  // shredded: the payload is gone for good, and says whose it was
      for (const auto& kv : event.data) {
        if (kv.key() != kernel::kSealedKey) out.data.emplace(kv.key(), kv.value());
      }
      out.data[kernel::kErasedKey] = json::object{{"subject", memberString(body, "subject")}};
      return out;
    }
    json::value v = json::parse(*plaintext, "the unsealed payload");
    if (!v.is_object()) throw InvalidArgumentError("the unsealed payload is not a JSON object");
    out.data = std::move(v.get_object());
    if (kernel::isSealed(out.data) || kernel::isErased(out.data)) {
      throw InvalidArgumentError("the unsealed payload is itself sealed or erased");
    }
    kernel::validateEventData(out.type, out.data);
  } catch (const InvalidArgumentError& e) {
    throw CorruptEventError(executionId, event.seq, e.what());
  }
  return out;
}

std::optional<std::string> EventUnsealer::open(const json::object& sealed, const std::string& ad,
                                               const std::string& what) {
  try {
    return openOrInvalid(sealed, ad);
  } catch (const InvalidArgumentError& e) {
    throw DataLossError(what + ": " + e.what());
  }
}

std::optional<std::string> EventUnsealer::openOrInvalid(const json::object& sealed,
                                                        const std::string& ad) {
  std::string subject = memberString(sealed, "subject");
  std::string keyId = memberString(sealed, "keyId");
  std::optional<std::string> nonceBytes = detail::fromBase64(memberString(sealed, "nonce"));
  std::optional<std::string> ciphertext = detail::fromBase64(memberString(sealed, "ciphertext"));
  if (!nonceBytes || nonceBytes->size() != detail::kNonceBytes || !ciphertext) {
    throw InvalidArgumentError(
        "the sealed payload is malformed: its nonce or ciphertext is not base64 of the right "
        "length");
  }
  const std::optional<DataKey>& k = key(subject, keyId);
  if (!k) return std::nullopt;
  detail::Nonce nonce;
  std::copy(nonceBytes->begin(), nonceBytes->end(), nonce.begin());
  std::optional<std::string> plaintext = detail::open(k->bytes(), nonce, *ciphertext, ad);
  if (!plaintext) {
    throw InvalidArgumentError("the sealed payload does not authenticate under key " + keyId +
                               " of subject '" + subject +
                               "': it was altered, or moved from another execution, seq or "
                               "type");
  }
  return plaintext;
}

}  // namespace loom::compliance
