#include "aead.h"

#include <sodium.h>

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

std::string associatedData(std::string_view domain, std::initializer_list<std::string_view> parts) {
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
  crypto_aead_xchacha20poly1305_ietf_encrypt(reinterpret_cast<unsigned char*>(out.data()), &written,
                                             bytesOf(plaintext), plaintext.size(), bytesOf(ad),
                                             ad.size(), nullptr, nonce.data(), key.data());
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

bool openKey(const Key& key, const Nonce& nonce, std::string_view ciphertext, std::string_view ad,
             Key& out) {
  ensureSodium();
  if (ciphertext.size() != kKeyBytes + kTagBytes) return false;
  unsigned long long written = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(out.data(), &written, nullptr, bytesOf(ciphertext),
                                                 ciphertext.size(), bytesOf(ad), ad.size(),
                                                 nonce.data(), key.data()) != 0 ||
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

// Base64 is done here rather than with sodium_bin2base64: the constant-time codec costs as much
// as the encryption on every sealed event, and what is encoded here is ciphertext (or, in an
// export, data the caller hands out anyway), not key material.
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string toBase64(std::string_view bytes) {
  const auto* in = bytesOf(bytes);
  const std::size_t n = bytes.size();
  std::string out((n + 2) / 3 * 4, '=');
  std::size_t o = 0;
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    out[o++] = kBase64[v >> 18];
    out[o++] = kBase64[(v >> 12) & 63];
    out[o++] = kBase64[(v >> 6) & 63];
    out[o++] = kBase64[v & 63];
  }
  if (i < n) {
    uint32_t v = uint32_t{in[i]} << 16;
    if (i + 1 < n) v |= uint32_t{in[i + 1]} << 8;
    out[o++] = kBase64[v >> 18];
    out[o++] = kBase64[(v >> 12) & 63];
    if (i + 1 < n) out[o] = kBase64[(v >> 6) & 63];
  }
  return out;
}

std::optional<std::string> fromBase64(std::string_view text) {
  static const auto kValues = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    for (int k = 0; k < 64; ++k) t[static_cast<uint8_t>(kBase64[k])] = static_cast<int8_t>(k);
    return t;
  }();
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (last && k >= 4 - padding) {
        if (c != '=') return std::nullopt;
        v <<= 6;
        continue;
      }
      int8_t d = kValues[static_cast<uint8_t>(c)];
      if (d < 0) return std::nullopt;
      v = (v << 6) | static_cast<uint32_t>(d);
    }
    out.push_back(static_cast<char>(v >> 16));
    if (!last || padding < 2) out.push_back(static_cast<char>((v >> 8) & 0xff));
    if (!last || padding < 1) out.push_back(static_cast<char>(v & 0xff));
    // Canonical form only: the bits a padded group leaves over must be zero.
    if (last && padding == 2 && (v & 0xffff) != 0) return std::nullopt;
    if (last && padding == 1 && (v & 0xff) != 0) return std::nullopt;
  }
  return out;
}

void wipe(Key& key) { sodium_memzero(key.data(), key.size()); }

}  // namespace loom::compliance::detail
