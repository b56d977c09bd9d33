#include "aead.h"

#include <sodium.h>

#include <cstring>

#include "loom/util/error.h"

namespace loom::compliance::detail {

static_assert(kNonceBytes == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
static_assert(kTagBytes == crypto_aead_xchacha20poly1305_ietf_ABYTES);
static_assert(kKeyBytes == crypto_aead_xchacha20poly1305_ietf_KEYBYTES);
static_assert(kKeyBytes == crypto_kdf_KEYBYTES);

namespace {

void appendLength(std::string& out, std::size_t n) {
  auto v = static_cast<uint32_t>(n);
  out.push_back(static_cast<char>((v >> 24) & 0xff));
  out.push_back(static_cast<char>((v >> 16) & 0xff));
  out.push_back(static_cast<char>((v >> 8) & 0xff));
  out.push_back(static_cast<char>(v & 0xff));
}

const unsigned char* bytesOf(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

void ensureSodium() {
  static const int ready = sodium_init();
  if (ready < 0) throw InternalError("libsodium could not be initialized (sodium_init failed)");
}

std::string associatedData(std::string_view domain,
                           std::initializer_list<std::string_view> parts) {
  std::string out;
  appendLength(out, domain.size());
  out += domain;
  for (std::string_view part : parts) {
    appendLength(out, part.size());
    out += part;
  }
  return out;
}

Nonce randomNonce() {
  ensureSodium();
  Nonce n;
  randombytes_buf(n.data(), n.size());
  return n;
}

Key randomKey() {
  ensureSodium();
  Key k;
  randombytes_buf(k.data(), k.size());
  return k;
}

std::string randomHex(std::size_t n) {
  ensureSodium();
  std::string bytes(n, '\0');
  randombytes_buf(bytes.data(), n);
  return toHex(bytes);
}

std::string seal(const Key& key, const Nonce& nonce, std::string_view plaintext,
                 std::string_view ad) {
  ensureSodium();
  std::string out(plaintext.size() + kTagBytes, '\0');
  unsigned long long written = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(reinterpret_cast<unsigned char*>(out.data()),
                                             &written, bytesOf(plaintext), plaintext.size(),
                                             bytesOf(ad), ad.size(), nullptr, nonce.data(),
                                             key.data());
  out.resize(written);
  return out;
}

std::optional<std::string> open(const Key& key, const Nonce& nonce, std::string_view ciphertext,
                                std::string_view ad) {
  ensureSodium();
  if (ciphertext.size() < kTagBytes) return std::nullopt;
  std::string out(ciphertext.size() - kTagBytes, '\0');
  unsigned long long written = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          reinterpret_cast<unsigned char*>(out.data()), &written, nullptr, bytesOf(ciphertext),
          ciphertext.size(), bytesOf(ad), ad.size(), nonce.data(), key.data()) != 0) {
    return std::nullopt;
  }
  out.resize(written);
  return out;
}

bool openKey(const Key& key, const Nonce& nonce, std::string_view ciphertext,
             std::string_view ad, Key& out) {
  ensureSodium();
  if (ciphertext.size() != kKeyBytes + kTagBytes) return false;
  unsigned long long written = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(out.data(), &written, nullptr,
                                                 bytesOf(ciphertext), ciphertext.size(),
                                                 bytesOf(ad), ad.size(), nonce.data(),
                                                 key.data()) != 0 ||
      written != kKeyBytes) {
    wipe(out);
    return false;
  }
  return true;
}

Key deriveKey(const Key& key, uint64_t id, const char (&context)[9]) {
  ensureSodium();
  Key sub;
  crypto_kdf_derive_from_key(sub.data(), sub.size(), id, context, key.data());
  return sub;
}

std::string toHex(const uint8_t* bytes, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 15];
  }
  return out;
}

std::string toHex(std::string_view bytes) { return toHex(bytesOf(bytes), bytes.size()); }

bool fromHex(std::string_view hex, uint8_t* out, std::size_t size) {
  if (hex.size() != 2 * size) return false;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < size; ++i) {
    int hi = digit(hex[2 * i]);
    int lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      sodium_memzero(out, size);
      return false;
    }
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

std::string toBase64(std::string_view bytes) {
  ensureSodium();
  constexpr int kVariant = sodium_base64_VARIANT_ORIGINAL;
  std::string out(sodium_base64_ENCODED_LEN(bytes.size(), kVariant), '\0');
  sodium_bin2base64(out.data(), out.size(), bytesOf(bytes), bytes.size(), kVariant);
  out.resize(std::strlen(out.c_str()));
  return out;
}

std::optional<std::string> fromBase64(std::string_view text) {
  ensureSodium();
  std::string out(text.size() / 4 * 3 + 3, '\0');
  std::size_t n = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                        text.size(), nullptr, &n, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size()) {
    return std::nullopt;
  }
  out.resize(n);
  return out;
}

void wipe(Key& key) { sodium_memzero(key.data(), key.size()); }

}  // namespace loom::compliance::detail
