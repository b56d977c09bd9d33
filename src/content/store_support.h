// Pieces every ContentStore implementation of this folder shares: address validation, the
// check that stored bytes still hash to their address, and the monotonic touch clock.
// Thread-safe: free functions, and a TouchClock may be read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "loom/util/clock.h"

namespace loom::content::detail {

// Throws InvalidArgumentError naming `address` (shortened when long) and `store` unless it is
// 64 lower-case hex digits.
void requireAddress(std::string_view address, std::string_view store);

// Throws DataLossError naming `address`, `where` (the file or database holding it) and what to
// do, unless sha256Hex(bytes) == address.
void verifyBytes(std::string_view bytes, std::string_view address, std::string_view where);

// The store's touch clock: the injected Clock, never going backwards within one store.
class TouchClock {
 public:
  // Throws InvalidArgumentError when `clock` is null (naming `store`).
  TouchClock(std::shared_ptr<const Clock> clock, std::string_view store);
  // clock->nowMillis(), or the largest value returned before when the clock stepped back.
  int64_t now() const;

 private:
  std::shared_ptr<const Clock> clock_;
  mutable std::atomic<int64_t> last_{std::numeric_limits<int64_t>::min()};
};

}  // namespace loom::content::detail
