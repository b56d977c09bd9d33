#include "store_support.h"

#include "loom/content/content_store.h"
#include "loom/util/error.h"

namespace loom::content::detail {

void requireAddress(std::string_view address, std::string_view store) {
  if (isValidAddress(address)) return;
  constexpr std::size_t kShown = 80;
  std::string shown(address.substr(0, kShown));
  if (address.size() > kShown) shown += "...";
  throw InvalidArgumentError(std::string(store) + ": malformed content address '" + shown + "' (" +
                             std::to_string(address.size()) +
                             " characters): an address is the SHA-256 of the bytes as 64 "
                             "lower-case hex digits");
}

void verifyBytes(std::string_view bytes, std::string_view address, std::string_view where) {
  std::string actual = sha256Hex(bytes);
  if (actual == address) return;
  throw DataLossError("content blob " + std::string(address) + " in " + std::string(where) +
                      " is corrupt: its " + std::to_string(bytes.size()) +
                      " stored bytes hash to " + actual +
                      "; put the original bytes again to repair it, or remove the blob (a "
                      "resolve then reports it as gone)");
}

TouchClock::TouchClock(std::shared_ptr<const Clock> clock, std::string_view store)
    : clock_(std::move(clock)) {
  if (clock_ == nullptr) {
    throw InvalidArgumentError(std::string(store) +
                               " needs a Clock for its touch times; pass loom::systemClock()");
  }
}

int64_t TouchClock::now() const {
  int64_t now = clock_->nowMillis();
  int64_t last = last_.load(std::memory_order_relaxed);
  while (now > last && !last_.compare_exchange_weak(last, now, std::memory_order_relaxed)) {
  }
  return now > last ? now : last;
}

}  // namespace loom::content::detail
