#include "loom/kernel/event_store.h"

namespace loom::kernel {

std::vector<Event> EventStore::read(const std::string& executionId, int64_t fromSeq) const {
  std::vector<Event> out;
  scan(executionId, fromSeq, [&](const Event& e) { out.push_back(e); });
  return out;
}

}  // namespace loom::kernel
