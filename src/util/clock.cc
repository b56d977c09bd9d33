#include "loom/util/clock.h"

#include <climits>
#include <cstdio>
#include <ctime>
#include <thread>

#include "loom/util/error.h"

namespace loom {
namespace {

class SystemClock : public Clock {
 public:
  int64_t nowMillis() const override {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  }
  void sleepMillis(int64_t ms) const override {
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
};

}  // namespace

std::string formatTimestampSlow(int64_t millis);

std::shared_ptr<const Clock> systemClock() {
  static const auto clock = std::make_shared<const SystemClock>();
  return clock;
}

int64_t ManualClock::nowMillis() const {
  std::lock_guard lock(mu_);
  return now_;
}

void ManualClock::sleepMillis(int64_t ms) const { advance(ms); }

void ManualClock::advance(int64_t ms) const {
  std::lock_guard lock(mu_);
  now_ += ms;
}

std::string formatTimestamp(int64_t millis) {
  // Timestamps are written on every append: reuse the formatted second within a thread.
  thread_local int64_t cachedSecond = INT64_MIN;
  thread_local std::string cachedPrefix;
  int64_t second = millis >= 0 ? millis / 1000 : (millis - 999) / 1000;
  if (second != cachedSecond) {
    std::string full = formatTimestampSlow(second * 1000);
    cachedPrefix = full.substr(0, full.size() - 4);  // up to and including the '.'
    cachedSecond = second;
  }
  int ms = static_cast<int>(millis - second * 1000);
  std::string out = cachedPrefix;
  out += static_cast<char>('0' + ms / 100);
  out += static_cast<char>('0' + ms / 10 % 10);
  out += static_cast<char>('0' + ms % 10);
  out += 'Z';
  return out;
}

std::string formatTimestampSlow(int64_t millis) {
  time_t seconds = static_cast<time_t>(millis / 1000);
  int ms = static_cast<int>(millis % 1000);
  if (ms < 0) {
    ms += 1000;
    seconds -= 1;
  }
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

int64_t parseTimestamp(const std::string& text) {
  std::tm tm{};
  int ms = 0;
  char z = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &z) != 8 ||
      z != 'Z') {
    throw InvalidArgumentError("not an RFC 3339 UTC timestamp with milliseconds: '" + text +
                               "'");
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

int64_t parseDurationMillis(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string_view unit = text.substr(digits);
  int64_t scale = unit == "ms"  ? 1
                  : unit == "s" ? 1'000
                  : unit == "m" ? 60'000
                  : unit == "h" ? 3'600'000
                  : unit == "d" ? 86'400'000
                                : 0;
  if (digits == 0 || digits > 9 || scale == 0) {
    throw InvalidArgumentError("'" + std::string(text) +
                               "' is not a duration: write a whole number and a unit, e.g. "
                               "\"500ms\", \"30s\", \"15m\", \"24h\" or \"7d\"");
  }
  return std::stoll(std::string(text.substr(0, digits))) * scale;
}

int64_t parseSinceMillis(const std::string& text, int64_t nowMillis) {
  if (text.find('T') != std::string::npos) return parseTimestamp(text);
  return nowMillis - parseDurationMillis(text);
}

}  // namespace loom
