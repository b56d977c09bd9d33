// The sweep's table of cited addresses: open addressing with linear probing over 32-byte
// digests, so a lookup costs about one cache miss (a node-based map costs two) and nothing is
// allocated per cited ref. Memory stays bounded by the number of distinct cited addresses.
// Not thread-safe (one sweep).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace loom::sweep::detail {

struct Key {
  std::array<uint64_t, 4> words{};
  bool operator==(const Key&) const = default;
};

struct Cited {
  bool loadBearing = false;
  uint8_t pinnedBy = 0;  // 1 + index of the first pin source naming it; 0 when none
  int64_t keepUntil = std::numeric_limits<int64_t>::min();  // telemetry: end of the ttl
};

class CitedTable {
 public:
  CitedTable() : slots_(1 << 16) {}

  // The entry of `key`, inserted (default Cited) when absent.
  Cited& operator[](const Key& key) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    Slot& slot = probe(slots_, key);
    if (!slot.used) {
      slot.used = true;
      slot.key = key;
      ++size_;
    }
    return slot.value;
  }

  // The entry of `key`, nullptr when absent.
  const Cited* find(const Key& key) const {
    const Slot& slot = probe(const_cast<std::vector<Slot>&>(slots_), key);
    return slot.used ? &slot.value : nullptr;
  }

  std::size_t size() const { return size_; }

 private:
  struct Slot {
    Key key;
    Cited value;
    bool used = false;
  };

  // The slot holding `key`, or the empty slot where it belongs. SHA-256 words are uniform, so
  // the first word is a good hash.
  static Slot& probe(std::vector<Slot>& slots, const Key& key) {
    std::size_t mask = slots.size() - 1;
    for (std::size_t i = key.words[0] & mask;; i = (i + 1) & mask) {
      if (!slots[i].used || slots[i].key == key) return slots[i];
    }
  }

  void grow() {
    std::vector<Slot> bigger(slots_.size() * 2);
    for (const Slot& s : slots_) {
      if (s.used) probe(bigger, s.key) = s;
    }
    slots_.swap(bigger);
  }

  std::vector<Slot> slots_;  // size is a power of two; at most half full
  std::size_t size_ = 0;
};

}  // namespace loom::sweep::detail
