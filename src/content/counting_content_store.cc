#include "content/counting_content_store.h"

namespace loom::content {

void CountingContentStore::note(ContentCall kind) const {
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

ContentCapabilities CountingContentStore::capabilities() const { return inner_.capabilities(); }

std::string CountingContentStore::put(std::string_view bytes,
                                      const std::optional<std::string>& subject) {
  note(ContentCall::kPut);
  return inner_.put(bytes, subject);
}

std::optional<std::string> CountingContentStore::get(
    std::string_view address, const std::optional<std::string>& subject) const {
  note(ContentCall::kGet);
  return inner_.get(address, subject);
}

bool CountingContentStore::has(std::string_view address) const {
  note(ContentCall::kHas);
  return inner_.has(address);
}

bool CountingContentStore::remove(std::string_view address) {
  note(ContentCall::kRemove);
  return inner_.remove(address);
}

bool CountingContentStore::deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) {
  note(ContentCall::kDeleteIfUntouchedSince);
  return inner_.deleteIfUntouchedSince(address, cutoffMillis);
}

int64_t CountingContentStore::touchClock() const {
  note(ContentCall::kTouchClock);
  return inner_.touchClock();
}

void CountingContentStore::forEachBlob(const std::function<void(const BlobInfo&)>& visit) const {
  note(ContentCall::kForEachBlob);
  inner_.forEachBlob(visit);
}

std::optional<BlobInfo> CountingContentStore::stat(std::string_view address) const {
  note(ContentCall::kStat);
  return inner_.stat(address);
}

}  // namespace loom::content
