#include "compliance/encrypting_content_store.h"

#include <sodium.h>

#include "aead.h"
#include "loom/util/error.h"

namespace loom::compliance {
namespace {

// Sealed blob layout (docs/adr/0003-encrypting-content-store.md):
//   "LSB1" | key id length (1 byte) | key id | nonce (24) | ciphertext (bytes + 16-byte tag)
constexpr std::string_view kMagic = "LSB1";
constexpr std::string_view kBlobDomain = "loom.blob.v1";
constexpr uint64_t kAddressSubkey = 1;
constexpr uint64_t kBlobSubkey = 2;

// The two per-subject subkeys, wiped when done.
struct BlobKeys {
  explicit BlobKeys(const DataKey& key)
      : address(detail::deriveKey(key.bytes(), kAddressSubkey, "loomaddr")),
        blob(detail::deriveKey(key.bytes(), kBlobSubkey, "loomblob")) {}
  detail::SecretKey address;
  detail::SecretKey blob;
};

std::string subjectOf(const std::optional<std::string>& subject) {
  return subject ? *subject : std::string(kSystemSubject);
}

std::string blobAd(const std::string& subject, std::string_view keyId) {
  return detail::associatedData(kBlobDomain, {subject, keyId});
}

struct SealedBlob {
  std::string_view keyId;
  detail::Nonce nonce{};
  std::string_view ciphertext;
};

std::optional<SealedBlob> parseBlob(std::string_view blob) {
  if (blob.size() < kMagic.size() + 1 || blob.substr(0, kMagic.size()) != kMagic) {
    return std::nullopt;
  }
  std::size_t idLength = static_cast<uint8_t>(blob[kMagic.size()]);
  std::size_t at = kMagic.size() + 1;
  if (idLength == 0 || blob.size() < at + idLength + detail::kNonceBytes + detail::kTagBytes) {
    return std::nullopt;
  }
  SealedBlob out;
  out.keyId = blob.substr(at, idLength);
  at += idLength;
  std::copy_n(blob.data() + at, detail::kNonceBytes, reinterpret_cast<char*>(out.nonce.data()));
  at += detail::kNonceBytes;
  out.ciphertext = blob.substr(at);
  return out;
}

}  // namespace

EncryptingContentStore::EncryptingContentStore(content::ContentStore& inner, KeyStore& keys)
    : ForwardingContentStore(inner), keys_(keys) {}

content::ContentCapabilities EncryptingContentStore::capabilities() const {
  content::ContentCapabilities caps = target().capabilities();
  caps.sealsContent = true;
  return caps;
}

std::string EncryptingContentStore::put(std::string_view bytes,
                                        const std::optional<std::string>& subject) {
  const std::string owner = subjectOf(subject);
  DataKey key = keys_.getOrCreate(owner);
  if (key.id().empty() || key.id().size() > 255) {
    throw InternalError("key id of subject '" + owner + "' has " + std::to_string(key.id().size()) +
                        " characters; a sealed blob holds 1 "
                        "to 255");
  }
  BlobKeys keys(key);
  // Synthetic nonce: the same bytes of the same subject seal to the same blob (dedup, touch),
  // and a nonce repeats only with the same plaintext.
  detail::Nonce nonce;
  crypto_generichash(nonce.data(), nonce.size(), reinterpret_cast<const uint8_t*>(bytes.data()),
                     bytes.size(), keys.address.bytes.data(), keys.address.bytes.size());
  std::string ciphertext = detail::seal(keys.blob.bytes, nonce, bytes, blobAd(owner, key.id()));
  std::string blob;
  blob.reserve(kMagic.size() + 1 + key.id().size() + nonce.size() + ciphertext.size());
  blob += kMagic;
  blob.push_back(static_cast<char>(key.id().size()));
  blob += key.id();
  blob.append(reinterpret_cast<const char*>(nonce.data()), nonce.size());
  blob += ciphertext;
  return target().put(blob, subject);
}

std::optional<std::string> EncryptingContentStore::get(
    std::string_view address, const std::optional<std::string>& subject) const {
  std::optional<std::string> blob = target().get(address, subject);
  if (!blob) return std::nullopt;
  std::optional<SealedBlob> sealed = parseBlob(*blob);
  if (!sealed) {
    throw DataLossError("content blob " + std::string(address) +
                        " is not a sealed blob of an EncryptingContentStore (bad header); was "
                        "it put through the inner store directly?");
  }
  const std::string owner = subjectOf(subject);
  std::optional<DataKey> key = keys_.find(owner, std::string(sealed->keyId));
  if (!key) return std::nullopt;  // shredded (erased), or another subject's blob
  BlobKeys keys(*key);
  std::optional<std::string> bytes =
      detail::open(keys.blob.bytes, sealed->nonce, sealed->ciphertext, blobAd(owner, key->id()));
  if (!bytes) {
    throw DataLossError("content blob " + std::string(address) +
                        " does not authenticate under key " + key->id() + " of subject '" + owner +
                        "': it was altered");
  }
  return bytes;
}

}  // namespace loom::compliance
