// SHA-256 (FIPS 180-4), the hash of every content address: on x86-64 CPUs with the SHA
// extensions (Intel since Goldmont and Ice Lake, AMD since Zen) the rounds run on them, about ten
// times faster than libsodium's portable code, which every other CPU uses. Both give the same
// digest (tested against each other). Not thread-safe: one object per hash.
#pragma once

#include <sodium.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace loom::content::detail {

class Sha256 {
 public:
  using Digest = std::array<unsigned char, 32>;

  Sha256();
  void update(std::string_view bytes);
  // The digest of everything updated; the object is spent.
  Digest finish();

  // True when this CPU runs the rounds on its SHA extensions.
  static bool usesShaExtensions();

 private:
  void compress(const unsigned char* blocks, std::size_t count);

  bool extensions_;
  crypto_hash_sha256_state sodium_{};  // without the extensions
  uint32_t state_[8]{};                // with them
  unsigned char pending_[64]{};        // bytes of a block not yet compressed
  std::size_t pendingBytes_ = 0;
  uint64_t totalBytes_ = 0;
};

// The SHA-256 digest of `bytes` in one call.
Sha256::Digest sha256(std::string_view bytes);

}  // namespace loom::content::detail
