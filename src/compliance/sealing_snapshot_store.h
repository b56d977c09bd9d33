// SealingSnapshotStore: a SnapshotStore decorator that seals snapshot states under the
// execution's subject key, as SealingEventStore seals its log. The subject is read from the
// state's "subject" member (docs/spec/snapshots.md; with sealSubjectless a state without one
// is sealed under kSystemSubject). The inner store holds {"sealed": {"subject", "keyId",
// "nonce", "ciphertext"}} whose associated data binds execution id and seq, so a sealed state
// moved to another execution or seq does not open.
// - latest() unseals; a snapshot whose key was shredded is treated as absent (nullopt): a
//   snapshot is an optimization and the log then reports the erasure.
// - forEach() visits unsealed states; an erased one as the state {"erased": {"subject": S}}.
// - A sealed state that does not authenticate under its existing key is a DataLossError naming
//   the execution and seq (the SnapshotStore contract for an unreadable state).
// Thread-safety: as the inner store and the key store. Both must outlive the decorator.
#pragma once

#include "compliance/event_sealing.h"
#include "loom/compliance/key_store.h"
#include "loom/kernel/forwarding_snapshot_store.h"

namespace loom::compliance {

class SealingSnapshotStore : public kernel::ForwardingSnapshotStore {
 public:
  SealingSnapshotStore(kernel::SnapshotStore& inner, KeyStore& keys, SealingOptions options = {});

  // SnapshotStore; see snapshot_store.h for each contract and the notes above. remove and
  // prune are forwarded.
  void put(const kernel::Snapshot& snapshot) override;
  std::optional<kernel::Snapshot> latest(const std::string& executionId) const override;
  void forEach(const std::function<void(const kernel::Snapshot&)>& visit) const override;

  kernel::SnapshotStore& inner() { return target(); }

 private:
  KeyStore& keys_;
  const SealingOptions options_;
};

}  // namespace loom::compliance
