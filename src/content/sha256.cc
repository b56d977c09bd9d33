#include "sha256.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace loom::content::detail {
namespace {

constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

#if defined(__x86_64__)

alignas(16) constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

bool cpuHasShaExtensions() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool ssse3 = (c & (1u << 9)) != 0, sse41 = (c & (1u << 19)) != 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool sha = (b & (1u << 29)) != 0;
  return ssse3 && sse41 && sha;
}

// The compression function over `count` 64-byte blocks. The state is kept as the instructions
// want it: ABEF in one register and CDGH in the other; each group of four rounds adds the next
// four schedule words to their constants, and the schedule for four groups ahead is computed
// as W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16] by sha256msg1/msg2.
__attribute__((target("sha,sse4.1,ssse3"))) void compressWithExtensions(uint32_t state[8],
                                                                        const unsigned char* data,
                                                                        std::size_t count) {
  const __m128i byteSwap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  hgfe = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, hgfe, 8);
  __m128i cdgh = _mm_blend_epi16(hgfe, cdab, 0xF0);
  for (; count > 0; --count, data += 64) {
    const __m128i abefBefore = abef, cdghBefore = cdgh;
    __m128i w[4];
    for (int i = 0; i < 4; ++i) {
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
                              byteSwap);
    }
#pragma GCC unroll 16
    for (int group = 0; group < 16; ++group) {
      __m128i wk = _mm_add_epi32(
          w[group % 4], _mm_load_si128(reinterpret_cast<const __m128i*>(&kRound[4 * group])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      if (group < 12) {  // the words of group + 4 replace this group's
        __m128i next = _mm_sha256msg1_epu32(w[group % 4], w[(group + 1) % 4]);
        next = _mm_add_epi32(next, _mm_alignr_epi8(w[(group + 3) % 4], w[(group + 2) % 4], 4));
        w[group % 4] = _mm_sha256msg2_epu32(next, w[(group + 3) % 4]);
      }
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abefBefore);
    cdgh = _mm_add_epi32(cdgh, cdghBefore);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), _mm_alignr_epi8(dchg, feba, 8));
}

#else

bool cpuHasShaExtensions() { return false; }

void compressWithExtensions(uint32_t*, const unsigned char*, std::size_t) {}

#endif

bool extensionsAvailable() {
  static const bool available = cpuHasShaExtensions();
  return available;
}

}  // namespace

Sha256::Sha256() : extensions_(extensionsAvailable()) {
  static const int ready = sodium_init();
  (void)ready;
  if (extensions_) {
    std::memcpy(state_, kInitial, sizeof state_);
  } else {
    crypto_hash_sha256_init(&sodium_);
  }
}

bool Sha256::usesShaExtensions() { return extensionsAvailable(); }

void Sha256::compress(const unsigned char* blocks, std::size_t count) {
  compressWithExtensions(state_, blocks, count);
}

void Sha256::update(std::string_view bytes) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t size = bytes.size();
  if (!extensions_) {
    crypto_hash_sha256_update(&sodium_, data, size);
    return;
  }
  totalBytes_ += size;
  if (size == 0) return;  // nothing to add (and data may be null)
  if (pendingBytes_ > 0) {
    std::size_t take = std::min(size, sizeof pending_ - pendingBytes_);
    std::memcpy(pending_ + pendingBytes_, data, take);
    pendingBytes_ += take;
    data += take;
    size -= take;
    if (pendingBytes_ < sizeof pending_) return;
    compress(pending_, 1);
    pendingBytes_ = 0;
  }
  compress(data, size / 64);
  data += size / 64 * 64;
  size %= 64;
  std::memcpy(pending_, data, size);
  pendingBytes_ = size;
}

Sha256::Digest Sha256::finish() {
  Digest digest{};
  if (!extensions_) {
    crypto_hash_sha256_final(&sodium_, digest.data());
    return digest;
  }
  // The padding: 0x80, zeros up to 56 bytes into a block, the length in bits big-endian.
  const uint64_t bits = totalBytes_ * 8;
  unsigned char tail[128]{};
  std::memcpy(tail, pending_, pendingBytes_);
  tail[pendingBytes_] = 0x80;
  const std::size_t blocks = pendingBytes_ < 56 ? 1 : 2;
  for (int i = 0; i < 8; ++i)
    tail[blocks * 64 - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  compress(tail, blocks);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j)
      digest[4 * i + j] = static_cast<unsigned char>(state_[i] >> (24 - 8 * j));
  }
  return digest;
}

Sha256::Digest sha256(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.finish();
}

}  // namespace loom::content::detail
