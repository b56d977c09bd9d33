// LogDigest: the count and a digest of a log's stored events, fed one event at a time, so two
// copies of a log (live and archived, or two segments) compare with one event of each in
// memory. Retention checks a segment against the live log with it; `loom retention supersede`
// checks a damaged segment's runs against their other copies.
#pragma once

#include <cstdint>
#include <string>

#include "archive_format.h"
#include "loom/kernel/event.h"

namespace loom::sweep {

class LogDigest {
 public:
  void add(const kernel::Event& event) {
    ++events_;
    sum_.update(kernel::toText(event));
    sum_.update("\n");
  }
  int64_t events() const { return events_; }
  std::string hex() { return sum_.hex(); }

 private:
  int64_t events_ = 0;
  format::Checksum sum_;
};

}  // namespace loom::sweep
