// SharedArray: an append-only sequence of JSON values whose copies are cheap, immutable views.
// Copying one is O(1) (two shared pointers and a size) and never copies a value: a copy sees
// exactly the values there were when it was made, whatever is appended afterwards. The agent
// loop keeps its transcript in one and lends a copy to each model call, so a turn costs the
// same at turn 5,000 as at turn 5 (docs/adr/0007-lent-transcript.md).
// Thread-safety: copies may be read and appended to on any threads (each slot is claimed
// atomically); one SharedArray object is not to be used from two threads at once. Values are never
// changed in place: to change one, build a new SharedArray (copying what changes).
#pragma once

#include <atomic>
#include <cstddef>
#include <iterator>
#include <memory>
#include <vector>

#include "loom/json/json.h"

namespace loom::json {

class SharedArray {
 public:
  SharedArray() = default;
  // Takes the values of `values` (moved, not copied).
  explicit SharedArray(array values);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The i-th value; i < size().
  const value& operator[](std::size_t i) const { return (*chunks_->list[i / kChunk])[i % kChunk]; }
  const value& back() const { return (*this)[size_ - 1]; }

  // Appends `v`. When another copy already appended past this one's end, this one first takes
  // a storage of its own (copying its values once), so no copy ever sees a value change.
  void push_back(value v);

  // A JSON array holding copies of the values (for a caller that needs to own or change them).
  array toArray() const;
  // Copies of the values [from, to) as a JSON array.
  array slice(std::size_t from, std::size_t to) const;

  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = value;
    using difference_type = std::ptrdiff_t;
    using pointer = const value*;
    using reference = const value&;
    const_iterator() = default;
    const_iterator(const SharedArray* a, std::size_t i) : a_(a), i_(i) {}
    reference operator*() const { return (*a_)[i_]; }
    pointer operator->() const { return &(*a_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      auto c = *this;
      ++i_;
      return c;
    }
    const_iterator& operator--() {
      --i_;
      return *this;
    }
    const_iterator& operator+=(difference_type n) {
      i_ += n;
      return *this;
    }
    const_iterator operator+(difference_type n) const { return {a_, i_ + n}; }
    const_iterator operator-(difference_type n) const { return {a_, i_ - n}; }
    difference_type operator-(const_iterator o) const {
      return static_cast<difference_type>(i_) - static_cast<difference_type>(o.i_);
    }
    reference operator[](difference_type n) const { return (*a_)[i_ + n]; }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    auto operator<=>(const const_iterator& o) const { return i_ <=> o.i_; }

   private:
    const SharedArray* a_ = nullptr;
    std::size_t i_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  static constexpr std::size_t kChunk = 64;
  using Chunk = std::vector<value>;  // kChunk slots, allocated once: never reallocated
  // The chunks in order. Replaced (not changed) when a chunk is added, so a copy's list never
  // changes under it; `filled` counts the slots claimed by appends (each claimed once).
  struct Chunks {
    std::vector<std::shared_ptr<Chunk>> list;
    std::atomic<std::size_t> filled{0};
  };
  std::size_t capacity() const { return chunks_->list.size() * kChunk; }
  bool claimNextSlot();
  void grow();
  void detach();

  std::shared_ptr<Chunks> chunks_;
  std::size_t size_ = 0;
};

}  // namespace loom::json
