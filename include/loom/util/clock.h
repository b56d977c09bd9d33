// The injectable clock. Everything in Loom that reads the time (event timestamps, TTLs, grace
// periods, timeouts, backoff) takes a Clock so tests can drive time deterministically.
// Implementations must be thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace loom {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch (wall clock; used for timestamps, TTL and grace).
  virtual int64_t nowMillis() const = 0;
  // Blocks the calling thread for about `ms` milliseconds (a fake clock advances instead).
  virtual void sleepMillis(int64_t ms) const = 0;
};

// The real clock: std::chrono::system_clock and std::this_thread::sleep_for.
std::shared_ptr<const Clock> systemClock();

// A clock for tests: starts at `startMillis`, moves only when told (sleep advances it).
class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t startMillis = 1'780'000'000'000) : now_(startMillis) {}
  int64_t nowMillis() const override;
  void sleepMillis(int64_t ms) const override;
  void advance(int64_t ms) const;

 private:
  mutable std::mutex mu_;
  mutable int64_t now_;  // GUARDED_BY(mu_)
};

// RFC 3339 UTC text with milliseconds, e.g. "2026-11-29T10:00:00.123Z".
std::string formatTimestamp(int64_t millis);
// Inverse of formatTimestamp; throws InvalidArgumentError on text it did not write.
int64_t parseTimestamp(const std::string& text);
// A duration as configuration spells it: a whole number and a unit, "500ms", "30s", "15m",
// "24h" or "7d", in milliseconds. Throws InvalidArgumentError naming the accepted forms.
int64_t parseDurationMillis(std::string_view text);
// A `--since` value: an RFC 3339 time ("2026-12-01T00:00:00.000Z") or a duration back from
// `nowMillis` ("24h", "7d"). Throws as parseTimestamp and parseDurationMillis.
int64_t parseSinceMillis(const std::string& text, int64_t nowMillis);

}  // namespace loom
