// EncryptingContentStore (ContentStore SPI 1.6.0, ADR 0143; design in
// docs/adr/0003-encrypting-content-store.md): wraps any ContentStore and seals each blob under
// its owning subject's key, so crypto-shredding the subject reaches its offloaded blobs.
// - put(bytes, subject) seals deterministically: the nonce is a keyed BLAKE2b of the bytes
//   under the subject's address key (derived from the data key), the bytes are encrypted with
//   XChaCha20-Poly1305 under the subject's blob key (derived too), and the sealed blob
//   "LSB1" | key id | nonce | ciphertext is put into the inner store. The address is the inner
//   store's: the SHA-256 of the sealed blob, a keyed function of the bytes. Equal bytes of one
//   subject share a blob (idempotent put, touch); equal bytes of two subjects get two
//   addresses, so an address leaks no equality across subjects and names no plaintext.
// - get(address, subject) opens the blob; nullopt when there is none, when the subject's key
//   that sealed it was shredded (erased: never garbage), or when it belongs to another subject.
//   A blob that does not authenticate under its existing key is DataLossError.
// - Without a subject, blobs are sealed under kSystemSubject (security.crypto).
// - has, remove, deleteIfUntouchedSince, touchClock, forEachBlob and stat are forwarded (sizes
//   are sealed sizes); capabilities are the inner store's plus sealsContent.
// Thread-safety: as the inner store and the key store. Both must outlive the wrapper.
#pragma once

#include "loom/compliance/key_store.h"
#include "loom/content/forwarding_content_store.h"

namespace loom::compliance {

class EncryptingContentStore : public content::ForwardingContentStore {
 public:
  EncryptingContentStore(content::ContentStore& inner, KeyStore& keys);

  // ContentStore; see content_store.h for each contract and the notes above. Besides, put and
  // get may throw the key store's errors. The other calls are forwarded.
  content::ContentCapabilities capabilities() const override;
  std::string put(std::string_view bytes,
                  const std::optional<std::string>& subject = std::nullopt) override;
  std::optional<std::string> get(
      std::string_view address,
      const std::optional<std::string>& subject = std::nullopt) const override;

  content::ContentStore& inner() { return target(); }

 private:
  KeyStore& keys_;
};

}  // namespace loom::compliance
