#include "key_wrapping.h"

#include "loom/util/error.h"

namespace loom::compliance::detail {
namespace {

// The check value: a known text sealed under the master key. Opening it proves the key.
constexpr std::string_view kCheckPlaintext = "loom key store check v1";
constexpr std::string_view kCheckDomain = "loom.keystore.check.v1";
constexpr std::string_view kWrapDomain = "loom.keystore.key.v1";

std::string wrapAd(const std::string& subject, std::string_view keyId) {
  return associatedData(kWrapDomain, {subject, keyId});
}

}  // namespace

CheckValue newCheckValue(const SecretKey& master) {
  Nonce nonce = randomNonce();
  return {toHex(nonce.data(), nonce.size()),
          toHex(seal(master.bytes, nonce, kCheckPlaintext, associatedData(kCheckDomain, {})))};
}

void verifyCheckValue(const SecretKey& master, const std::optional<std::string>& nonceHex,
                      const std::optional<std::string>& sealedHex, const std::string& store,
                      const std::string& origin) {
  Nonce nonce{};
  std::string sealed(sealedHex ? sealedHex->size() / 2 : 0, '\0');
  bool readable = nonceHex && sealedHex && fromHex(*nonceHex, nonce.data(), nonce.size()) &&
                  fromHex(*sealedHex, reinterpret_cast<uint8_t*>(sealed.data()), sealed.size());
  if (!readable) {
    throw DataLossError("key store " + store + ": its master key check value is damaged");
  }
  auto opened = open(master.bytes, nonce, sealed, associatedData(kCheckDomain, {}));
  if (!opened || *opened != kCheckPlaintext) {
    throw ConfigError("the master key in " + origin + " does not open this key store (" + store +
                      "); it was created under another master key. Set security.keys to the "
                      "master key this home was created with (a new key cannot read existing "
                      "keys, and nothing was changed); a separate home needs its own --home, or "
                      "on PostgreSQL its own storage.schema");
  }
}

std::pair<DataKey, WrappedKey> newWrappedKey(const SecretKey& master, const std::string& subject) {
  Key bytes = randomKey();
  std::string keyId = randomHex(16);
  Nonce nonce = randomNonce();
  std::string_view plain(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::string wrapped = seal(master.bytes, nonce, plain, wrapAd(subject, keyId));
  DataKey key{keyId, bytes};
  wipe(bytes);
  return {std::move(key), WrappedKey{keyId, toHex(nonce.data(), nonce.size()), toHex(wrapped)}};
}

DataKey unwrapKey(const SecretKey& master, const std::string& subject, std::string_view keyId,
                  std::string_view nonceHex, std::string_view wrappedHex,
                  const std::string& store) {
  Nonce nonce{};
  std::string wrapped(wrappedHex.size() / 2, '\0');
  Key bytes{};
  bool ok = fromHex(nonceHex, nonce.data(), nonce.size()) &&
            fromHex(wrappedHex, reinterpret_cast<uint8_t*>(wrapped.data()), wrapped.size()) &&
            openKey(master.bytes, nonce, wrapped, wrapAd(subject, keyId), bytes);
  if (!ok) {
    throw DataLossError("key store " + store + ": the key of subject '" + subject + "' (key id " +
                        std::string(keyId) +
                        ") does not open under the master key that opened the store: the row "
                        "is corrupt or was moved from another subject");
  }
  DataKey key{std::string(keyId), bytes};
  wipe(bytes);
  return key;
}

}  // namespace loom::compliance::detail
