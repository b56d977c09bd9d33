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

void FaultyContentStore::onCall(ContentCall kind) const {
  auto i = static_cast<std::size_t>(kind);
  int64_t n = calls_[i].fetch_add(1) + 1;
  int64_t from = failFrom_[i].load();
  if (from > 0 && n >= from) {
    throw UnavailableError("injected fault: content store " + std::string(contentCallName(kind)) +
                           " call " + std::to_string(n) + " failed (FaultyContentStore.failFrom " +
                           std::to_string(from) + "); nothing was done");
  }
}

}  // namespace loom::content
