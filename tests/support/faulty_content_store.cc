#include "support/faulty_content_store.h"

#include <string>

#include "loom/util/error.h"

namespace loom::content {

void FaultyContentStore::failFrom(ContentCall kind, int64_t n) {
  auto i = static_cast<std::size_t>(kind);
  failFrom_[i].store(0);  // never fail while renumbering
  calls_[i].store(0);
  failFrom_[i].store(n);
}

int64_t FaultyContentStore::calls(ContentCall kind) const {
  return calls_[static_cast<std::size_t>(kind)].load();
}

void FaultyContentStore::enter(ContentCall kind) const {
  auto i = static_cast<std::size_t>(kind);
  int64_t n = calls_[i].fetch_add(1) + 1;
  int64_t from = failFrom_[i].load();
  if (from > 0 && n >= from) {
    throw UnavailableError("injected fault: content store " + std::string(contentCallName(kind)) +
                           " call " + std::to_string(n) + " failed (FaultyContentStore.failFrom " +
                           std::to_string(from) + "); nothing was done");
  }
}

ContentCapabilities FaultyContentStore::capabilities() const { return inner_.capabilities(); }

std::string FaultyContentStore::put(std::string_view bytes,
                                    const std::optional<std::string>& subject) {
  enter(ContentCall::kPut);
  return inner_.put(bytes, subject);
}

std::optional<std::string> FaultyContentStore::get(
    std::string_view address, const std::optional<std::string>& subject) const {
  enter(ContentCall::kGet);
  return inner_.get(address, subject);
}

bool FaultyContentStore::has(std::string_view address) const {
  enter(ContentCall::kHas);
  return inner_.has(address);
}

bool FaultyContentStore::remove(std::string_view address) {
  enter(ContentCall::kRemove);
  return inner_.remove(address);
}

bool FaultyContentStore::deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) {
  enter(ContentCall::kDeleteIfUntouchedSince);
  return inner_.deleteIfUntouchedSince(address, cutoffMillis);
}

int64_t FaultyContentStore::touchClock() const {
  enter(ContentCall::kTouchClock);
  return inner_.touchClock();
}

void FaultyContentStore::forEachBlob(const std::function<void(const BlobInfo&)>& visit) const {
  enter(ContentCall::kForEachBlob);
  inner_.forEachBlob(visit);
}

std::optional<BlobInfo> FaultyContentStore::stat(std::string_view address) const {
  enter(ContentCall::kStat);
  return inner_.stat(address);
}

}  // namespace loom::content
