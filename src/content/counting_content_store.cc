#include "content/counting_content_store.h"

namespace loom::content {

void CountingContentStore::onCall(ContentCall kind) const {
  counts_[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
}

int64_t CountingContentStore::count(ContentCall kind) const {
  return counts_[static_cast<std::size_t>(kind)].load(std::memory_order_relaxed);
}

int64_t CountingContentStore::count(std::string_view kind) const {
  return count(contentCallFromName(kind));
}

int64_t CountingContentStore::total() const {
  int64_t sum = 0;
  for (const auto& c : counts_) sum += c.load(std::memory_order_relaxed);
  return sum;
}

void CountingContentStore::reset() {
  for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
}

}  // namespace loom::content
