// The simulator's randomness: SplitMix64, so a seed means the same choices on every machine
// and standard library (std::uniform_int_distribution is implementation-defined).
#pragma once

#include <cstdint>
#include <vector>

namespace loom::sim {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n) { return next() % n; }
  int64_t between(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(below(hi - lo + 1)); }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  template <typename T>
  T pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

 private:
  uint64_t state_;
};

}  // namespace loom::sim
