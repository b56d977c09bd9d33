// The master-key rules every persistent KeyStore shares (one home; SQLite and PostgreSQL): the
// check value that proves a master key is the one a store was created under, and the wrapping
// of each subject's data key (XChaCha20-Poly1305 under the master key, with the subject and the
// key id as associated data, so a row moved to another subject does not open). The stored
// forms are lower-case hex. Thread-safety: free functions over caller-owned values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "aead.h"
#include "loom/compliance/key_store.h"

namespace loom::compliance::detail {

struct CheckValue {
  std::string nonceHex;
  std::string sealedHex;
};

// A new store's check value: a known text sealed under `master`.
CheckValue newCheckValue(const SecretKey& master);

// Throws DataLossError when the stored check value is damaged (naming `store`), ConfigError
// naming `origin` and `store` when `master` does not open it (another master key).
void verifyCheckValue(const SecretKey& master, const std::optional<std::string>& nonceHex,
                      const std::optional<std::string>& sealedHex, const std::string& store,
                      const std::string& origin);

struct WrappedKey {
  std::string keyId;
  std::string nonceHex;
  std::string wrappedHex;
};

// A fresh random data key for `subject` under a new random key id, and its wrapped form.
std::pair<DataKey, WrappedKey> newWrappedKey(const SecretKey& master, const std::string& subject);

// The data key a stored row holds. Throws DataLossError naming `store`, the subject and the
// key id when it does not open under `master` (corrupt, or moved from another subject).
DataKey unwrapKey(const SecretKey& master, const std::string& subject, std::string_view keyId,
                  std::string_view nonceHex, std::string_view wrappedHex, const std::string& store);

}  // namespace loom::compliance::detail
