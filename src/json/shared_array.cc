#include "loom/json/shared_array.h"

namespace loom::json {

SharedArray::SharedArray(array values) {
  for (auto& v : values) push_back(std::move(v));
}

void SharedArray::push_back(value v) {
  if (!claimNextSlot()) {
    if (chunks_ && size_ < capacity()) detach();  // another copy appended past this one
    if (!claimNextSlot()) grow();
  }
  (*chunks_->list[size_ / kChunk])[size_ % kChunk] = std::move(v);
  ++size_;
}

bool SharedArray::claimNextSlot() {
  if (!chunks_ || size_ == capacity()) return false;
  std::size_t expected = size_;
  return chunks_->filled.compare_exchange_strong(expected, size_ + 1, std::memory_order_acq_rel);
}

void SharedArray::grow() {
  // A new list with one more chunk: copies holding the old list keep it unchanged.
  auto next = std::make_shared<Chunks>();
  if (chunks_) next->list = chunks_->list;
  next->list.push_back(std::make_shared<Chunk>(kChunk));
  next->filled.store(size_ + 1, std::memory_order_relaxed);  // the slot being written
  chunks_ = std::move(next);
}

void SharedArray::detach() {
  SharedArray own;
  for (const auto& v : *this) own.push_back(v);
  *this = std::move(own);
}

array SharedArray::toArray() const { return slice(0, size_); }

array SharedArray::slice(std::size_t from, std::size_t to) const {
  array out;
  out.reserve(to - from);
  for (std::size_t i = from; i < to; ++i) out.push_back((*this)[i]);
  return out;
}

}  // namespace loom::json
