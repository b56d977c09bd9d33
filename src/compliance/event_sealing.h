// Sealing one event payload under a subject's data key, and unsealing it (docs/spec/events.md,
// "Sealed events"). SealingEventStore uses these on every append and scan; anything that reads
// stored events past the store (an archive segment written by retention, `loom log` of an
// archived execution, the sweep's archive pins, export) unseals them with EventUnsealer.
// - The payload (the event's data, as JSON text) is encrypted with XChaCha20-Poly1305 under
//   the key, with a random nonce; the associated data binds execution id, seq and type (and
//   EXECUTION_STARTED's clear workflow and subject), so a sealed row moved to another
//   execution or seq, or given another type, does not open.
// - Unsealing: a clear event passes through unchanged; a sealed one whose key id the key store
//   no longer has, of a subject it shredded, reads as erased, {"erased": {"subject": S}}; one
//   that does not authenticate under an existing key, or names a key of a subject the key
//   store never shredded (a damaged row, or the wrong key store), is a CorruptEventError
//   naming execution and seq.
// Thread-safety: sealEvent is a pure function. An EventUnsealer caches the keys it looked up
// and is used by one thread at a time; keep it for one read (a scan), not for the process, so
// a shred is seen by the next read.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "loom/compliance/key_store.h"
#include "loom/kernel/event.h"

namespace loom::compliance {

struct SealingOptions {
  // security.crypto: also seal executions without a subject, under kSystemSubject. Off
  // (compliance.erase alone): only executions with a subject are sealed.
  bool sealSubjectless = false;
};

// The subject whose key seals an execution with subject `subject`; nullopt: not sealed.
std::optional<std::string> sealingSubject(const std::optional<std::string>& subject,
                                          const SealingOptions& options);

// `event` (seq already assigned) with its data sealed under `key` of `subject`. Throws
// InvalidArgumentError when the data is already sealed or erased (reserved shapes).
kernel::Event sealEvent(const std::string& executionId, kernel::Event event,
                        const std::string& subject, const DataKey& key);

class EventUnsealer {
 public:
  // `keys` must outlive the unsealer.
  explicit EventUnsealer(const KeyStore& keys) : keys_(keys) {}

  // The event with clear data, as described above. The unsealed data is validated like a
  // stored event's (CorruptEventError when it lacks a field its type requires).
  kernel::Event unseal(const std::string& executionId, const kernel::Event& event);

  // Opens a sealed JSON document {"subject","keyId","nonce","ciphertext"} under `ad`: the
  // plaintext, or nullopt when the key is gone (erased). Throws DataLossError (naming `what`)
  // when it is malformed, does not authenticate, or names a key of a subject the key store
  // never shredded. For sealed snapshots.
  std::optional<std::string> open(const json::object& sealed, const std::string& ad,
                                  const std::string& what);

 private:
  // open(), throwing InvalidArgumentError (what is wrong) instead of DataLossError.
  std::optional<std::string> openOrInvalid(const json::object& sealed, const std::string& ad);
  // The key, looked up once per (subject, key id); nullopt when shredded.
  const std::optional<DataKey>& key(const std::string& subject, const std::string& keyId);

  const KeyStore& keys_;
  std::map<std::pair<std::string, std::string>, std::optional<DataKey>> cache_;
};

// The sealed JSON document of `plaintext` under `key` of `subject` and associated data `ad`.
json::object sealDocument(std::string_view plaintext, const std::string& subject,
                          const DataKey& key, const std::string& ad);

}  // namespace loom::compliance
