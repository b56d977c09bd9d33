#include "compliance/sealing_snapshot_store.h"

#include "aead.h"
#include "loom/util/error.h"

namespace loom::compliance {
namespace {

constexpr std::string_view kSnapshotDomain = "loom.snapshot.v1";

std::string snapshotAd(const kernel::Snapshot& s) {
  return detail::associatedData(kSnapshotDomain, {s.executionId, std::to_string(s.seq)});
}

const json::object* sealedState(const json::value& state) {
  const auto* o = state.if_object();
  if (o == nullptr || o->size() != 1 || !kernel::isSealed(*o)) return nullptr;
  return &o->at(kernel::kSealedKey).get_object();
}

// The snapshot with its state unsealed; nullopt when its key was shredded.
std::optional<kernel::Snapshot> unsealSnapshot(EventUnsealer& unsealer, kernel::Snapshot s) {
  const json::object* sealed = sealedState(s.state);
  if (sealed == nullptr) return s;  // written before sealing was on, or not a subject's
  std::string what =
      "the sealed snapshot of execution '" + s.executionId + "' at seq " + std::to_string(s.seq);
  std::optional<std::string> plaintext = unsealer.open(*sealed, snapshotAd(s), what);
  if (!plaintext) return std::nullopt;
  try {
    s.state = json::parse(*plaintext, "unsealed snapshot state");
  } catch (const InvalidArgumentError& e) {
    throw DataLossError(what + " is corrupt: " + e.what());
  }
  return s;
}

}  // namespace

SealingSnapshotStore::SealingSnapshotStore(kernel::SnapshotStore& inner, KeyStore& keys,
                                           SealingOptions options)
    : ForwardingSnapshotStore(inner), keys_(keys), options_(options) {}

void SealingSnapshotStore::put(const kernel::Snapshot& snapshot) {
  std::optional<std::string> subject;
  if (const auto* o = snapshot.state.if_object()) {
    if (const auto* s = o->if_contains("subject"); s && s->is_string()) {
      subject = std::string(s->get_string());
    }
  }
  std::optional<std::string> sealer = sealingSubject(subject, options_);
  if (!sealer) return target().put(snapshot);
  DataKey key = keys_.getOrCreate(*sealer);
  kernel::Snapshot sealed{snapshot.executionId, snapshot.seq, json::value()};
  sealed.state =
      json::object{{kernel::kSealedKey, sealDocument(json::toText(snapshot.state), *sealer, key,
                                                     snapshotAd(snapshot))}};
  target().put(sealed);
}

std::optional<kernel::Snapshot> SealingSnapshotStore::latest(const std::string& executionId) const {
  std::optional<kernel::Snapshot> s = target().latest(executionId);
  if (!s) return s;
  EventUnsealer unsealer(keys_);
  return unsealSnapshot(unsealer, std::move(*s));
}

void SealingSnapshotStore::forEach(
    const std::function<void(const kernel::Snapshot&)>& visit) const {
  EventUnsealer unsealer(keys_);  // one walk: keys cached for it only
  target().forEach([&](const kernel::Snapshot& stored) {
    std::optional<kernel::Snapshot> s = unsealSnapshot(unsealer, stored);
    if (s) {
      visit(*s);
      return;
    }
    kernel::Snapshot erased{stored.executionId, stored.seq, json::value()};
    erased.state = json::object{
        {kernel::kErasedKey, json::object{{"subject", sealedState(stored.state)->at("subject")}}}};
    visit(erased);
  });
}

}  // namespace loom::compliance
