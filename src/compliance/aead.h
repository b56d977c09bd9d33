// The compliance module's small layer over libsodium: XChaCha20-Poly1305 (IETF) sealing and
// opening, associated data built from length-prefixed parts (so no two part lists collide),
// subkey derivation, random bytes, and the hex and base64 text forms the stores write.
// Everything that handles key material wipes its temporaries (sodium_memzero).
// Thread-safety: free functions over caller-owned values; sodium is initialized once.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace loom::compliance::detail {

inline constexpr std::size_t kKeyBytes = 32;
inline constexpr std::size_t kNonceBytes = 24;  // crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
inline constexpr std::size_t kTagBytes = 16;    // crypto_aead_xchacha20poly1305_ietf_ABYTES

using Key = std::array<uint8_t, kKeyBytes>;
using Nonce = std::array<uint8_t, kNonceBytes>;

// Initializes libsodium once per process; throws InternalError when it cannot.
void ensureSodium();

// `domain` then each part, every one prefixed by its length (4 bytes, big-endian).
std::string associatedData(std::string_view domain, std::initializer_list<std::string_view> parts);

Nonce randomNonce();
Key randomKey();
// Random bytes as lower-case hex (2 * n digits): key ids.
std::string randomHex(std::size_t n);

// Ciphertext (plaintext + 16-byte tag) of `plaintext` under `key` and `nonce`.
std::string seal(const Key& key, const Nonce& nonce, std::string_view plaintext,
                 std::string_view ad);
// The plaintext, or nullopt when the ciphertext does not authenticate under key, nonce and ad.
std::optional<std::string> open(const Key& key, const Nonce& nonce, std::string_view ciphertext,
                                std::string_view ad);
// The same for a 32-byte secret (a wrapped key): the result is written straight into `out`
// so no unwiped copy is left behind. False when it does not authenticate.
bool openKey(const Key& key, const Nonce& nonce, std::string_view ciphertext, std::string_view ad,
             Key& out);

// Subkey `id` of `key` for `context` (exactly 8 characters), crypto_kdf_derive_from_key.
Key deriveKey(const Key& key, uint64_t id, const char (&context)[9]);

std::string toHex(const uint8_t* bytes, std::size_t n);
std::string toHex(std::string_view bytes);
// Exactly 2 * size hex digits into `out`; false otherwise.
bool fromHex(std::string_view hex, uint8_t* out, std::size_t size);

std::string toBase64(std::string_view bytes);
// nullopt when `text` is not canonical standard base64 (with padding).
std::optional<std::string> fromBase64(std::string_view text);

// Wipes a key array in place.
void wipe(Key& key);

// A key held by an object: wiped when the holder is destroyed, also when the holder's
// constructor throws after the key was set (members are destroyed then, the holder is not).
struct SecretKey {
  Key bytes{};
  SecretKey() = default;
  explicit SecretKey(const Key& k) : bytes(k) {}
  ~SecretKey() { wipe(bytes); }
  SecretKey(const SecretKey&) = delete;
  SecretKey& operator=(const SecretKey&) = delete;
};

}  // namespace loom::compliance::detail
