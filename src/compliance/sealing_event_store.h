// SealingEventStore: an EventStore decorator that seals execution logs under per-subject keys
// (compliance.erase; security.crypto also seals executions without a subject, under
// kSystemSubject). On append, each event's payload is sealed (event_sealing.h) before the
// inner store sees it; on scan, payloads are unsealed, and those whose key was shredded read
// as erased ({"erased": {"subject": S}}), never as garbage. Metadata stays readable: the inner
// store computes it from the sealed events (EXECUTION_STARTED keeps workflow and subject in
// clear; sizes count stored bytes), so info, list and `loom ls` work before and after a shred.
// The control log is forwarded unsealed (it belongs to no execution).
//
// Wiring at boot (the lead's part; see docs/spec/events.md, "Sealed events"):
// - the runtime, the CLI's log reader and the sweep's liveLogs take the SealingEventStore;
// - retention (runRetention) takes the INNER store and the inner snapshot store, so the
//   archive segment receives the sealed events as stored (ciphertext, never plaintext);
// - the sweep's archive pins come from sealedArchivePins (below), which unseals the segment's
//   events to find what they cite; snapshot pins from the SealingSnapshotStore.
// Per execution, the sealing subject and its key are remembered from one append to the next
// (an execution's subject never changes), so a run's steps cost no metadata or key lookup; the
// entry is used only when an append continues exactly where this store's last append to that
// execution ended, and is dropped on remove, on a failed append and when the execution ends.
// A remembered key is checked on every append: once the subject is shredded, an append of a
// run that was under way is refused (FailedPreconditionError), so nothing more of it is
// recorded; a new execution of the subject gets the subject's new key.
// Thread-safety: thread-safe (the inner store and the key store are; the remembered entries
// are under a mutex). The inner store and the key store must outlive it.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compliance/event_sealing.h"
#include "loom/compliance/key_store.h"
#include "loom/kernel/forwarding_event_store.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/sweep.h"
#include "loom/util/function_ref.h"

namespace loom::compliance {

class SealingEventStore : public kernel::ForwardingEventStore {
 public:
  SealingEventStore(kernel::EventStore& inner, KeyStore& keys, SealingOptions options = {});

  // Seals every event of an execution that has a subject (with sealSubjectless, of every
  // execution) under the subject's current key, created on first use; otherwise forwards the
  // events unchanged. The subject comes from the EXECUTION_STARTED being appended, or from the
  // inner store's metadata. Errors as the inner append, plus InvalidArgumentError for an event
  // whose data already has the sealed or erased shape, and the key store's errors.
  int64_t append(const std::string& executionId, int64_t expectedNextSeq,
                 std::vector<kernel::Event> events) override;
  // As append, written under `lease` (the inner store checks the fence).
  int64_t appendLeased(const kernel::Lease& lease, int64_t expectedNextSeq,
                       std::vector<kernel::Event> events) override;
  // Visits unsealed events (erased ones as markers). Throws CorruptEventError naming the
  // execution and seq when a sealed payload does not authenticate under its existing key.
  void scan(const std::string& executionId, int64_t fromSeq,
            const std::function<void(const kernel::Event&)>& visit) const override;
  // Forgets how the execution was sealed, then forwards. Every other call is forwarded.
  bool remove(const std::string& executionId) override;

  kernel::EventStore& inner() { return target(); }
  const SealingOptions& options() const { return options_; }

 private:
  // Seals `events` as append says, then hands them to `write` (the inner append, plain or
  // under a lease).
  int64_t appendSealed(const std::string& executionId, int64_t expectedNextSeq,
                       std::vector<kernel::Event> events,
                       FunctionRef<int64_t(std::vector<kernel::Event>)> write);

  // How one execution's events are sealed: by `sealer`'s `key`, or not at all (no sealer).
  struct Sealing {
    std::optional<std::string> sealer;
    std::optional<DataKey> key;
    int64_t nextSeq = 0;  // valid for an append at exactly this seq
  };
  std::optional<Sealing> remembered(const std::string& executionId, int64_t expectedNextSeq);
  void remember(const std::string& executionId, Sealing sealing);
  void forget(const std::string& executionId);
  // Throws erasedDuringRun when the execution's first event is sealed under a key the key
  // store no longer has (the subject was erased after the execution started).
  void refuseIfErased(const std::string& executionId, const std::string& subject) const;
  static FailedPreconditionError erasedDuringRun(const std::string& executionId,
                                                 const std::string& subject);

  static constexpr std::size_t kMaxRemembered = 4096;  // running executions; cleared beyond

  KeyStore& keys_;
  const SealingOptions options_;
  std::mutex mu_;
  std::unordered_map<std::string, Sealing> sealings_;  // GUARDED_BY(mu_); by execution id
};

// The sweep's pin source over archive segments whose events are sealed: every address the
// unsealed events cite (erased ones cite nothing). Both must outlive the source. Throws, when
// visited, CorruptEventError for a sealed event that does not authenticate (a sweep never
// runs on a partial view).
sweep::PinSource sealedArchivePins(const sweep::Archive& archive, const KeyStore& keys);

}  // namespace loom::compliance
