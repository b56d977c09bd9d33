#include "loom/sweep/sweep.h"

#include <array>
#include <limits>

#include "cited_table.h"
#include "loom/util/error.h"
#include "sweep/content_walker.h"
#include "util/utf8.h"

namespace loom::sweep {
namespace {

// An UnreadableExecution's reason for a sealed log this sweep has no keys for.
constexpr std::string_view kSealedReason = "sealed with no keys here";

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

using detail::Cited;
using detail::CitedTable;
using detail::Key;

uint64_t hexNibble(char c) { return c <= '9' ? uint64_t(c - '0') : uint64_t(c - 'a' + 10); }

// `address` is 64 lower-case hex digits (the walker and the stores check it).
Key keyOf(std::string_view address) {
  Key k;
  for (std::size_t w = 0; w < 4; ++w) {
    uint64_t v = 0;
    for (std::size_t i = 0; i < 16; ++i) v = (v << 4) | hexNibble(address[w * 16 + i]);
    k.words[w] = v;
  }
  return k;
}

class Sweeper {
 public:
  Sweeper(content::ContentStore& store, const SweepSources& sources, const SweepOptions& options)
      : store_(store), sources_(sources), options_(options) {}

  SweepReport run() {
    checkCapabilities();
    report_.dryRun = options_.dryRun;
    sweepStart_ = store_.touchClock();
    now_ = options_.clock->nowMillis();
    scanLiveLogs();
    // A blob put by a run that has not ended may not be cited yet (its envelope is journaled
    // after the put), whatever the grace: keep what was touched since the oldest such run's
    // last event. One second of margin for the two clocks' granularity.
    cutoff_ = std::min(sweepStart_ - options_.graceMillis, activeSince_ - 1000);
    for (std::size_t i = 0; i < sources_.pins.size() && i < 255; ++i) scanPins(i);
    if (!unreadable_.empty()) throw SweepRefusedError(std::move(unreadable_));
    report_.citedAddresses = static_cast<int64_t>(cited_.size());
    reclaim();
    return report_;
  }

 private:
  void checkCapabilities() const {
    if (sources_.liveLogs == nullptr) throw FailedPreconditionError("sweep needs the live logs");
    auto caps = store_.capabilities();
    if (!caps.enumerate || !caps.deleteIfUntouchedSince || !caps.touchClock) {
      throw FailedPreconditionError(
          "sweep refused: the content store must enumerate its blobs and have "
          "deleteIfUntouchedSince and touchClock (ContentStore SPI 1.3.0); nothing was deleted");
    }
  }

  void scanLiveLogs() {
    kernel::forEachExecution(*sources_.liveLogs, {},
                             [&](const kernel::ExecutionInfo& info) { scanExecution(info); });
  }

  void scanPins(std::size_t i) {
    try {
      sources_.pins[i].visitAddresses([&](std::string_view a) {
        if (!content::isValidAddress(a)) return;
        auto& c = cited_[keyOf(a)];
        if (c.pinnedBy == 0) c.pinnedBy = static_cast<uint8_t>(i + 1);
      });
    } catch (const kernel::SealedEventError& e) {
      unreadable_.push_back({e.executionId() + " (" + sources_.pins[i].name + ")", e.what()});
    } catch (const CorruptEventError& e) {
      unreadable_.push_back({e.executionId() + " (" + sources_.pins[i].name + ")", e.what()});
    } catch (const DataLossError& e) {
      unreadable_.push_back({"(" + sources_.pins[i].name + ")", e.what()});
    }
  }

  // Scans one live log; an event it cannot read marks the execution unreadable.
  void scanExecution(const kernel::ExecutionInfo& info) {
    try {
      scanEvents(info);
    } catch (const kernel::SealedEventError& e) {
      // The message says how to open it once for all (refusalMessage), not once per run.
      unreadable_.push_back({info.id, std::string(kSealedReason) + " under subject '" +
                                          escapeInvalidUtf8(e.subject()) + "'"});
    } catch (const DataLossError& e) {  // CorruptEventError: a damaged row, an unknown type
      unreadable_.push_back({info.id, e.what()});
    }
    ++report_.executionsScanned;
    progress("scan");
  }

  void scanEvents(const kernel::ExecutionInfo& info) {
    int64_t lastAt = kForever;
    int64_t keepUntil = kForever;
    if (kernel::isEnded(info.status)) {
      int64_t end = info.endedAtMillis.value_or(0);
      keepUntil = end > kForever - options_.ttlMillis ? kForever : end + options_.ttlMillis;
    }
    sources_.liveLogs->scan(info.id, 1, [&](const kernel::Event& e) {
      kernel::requireUnsealed(info.id, e);  // a sealed event could cite anything
      ++report_.eventsScanned;
      lastAt = e.atMillis;
      std::string_view root;  // the load-bearing ref of this event, if any
      forEachRetainRoot(e, [&](std::string_view a) { root = a; });
      visitCitedAddresses(e, [&](std::string_view a) {
        auto& c = cited_[keyOf(a)];
        c.keepUntil = std::max(c.keepUntil, keepUntil);
        if (a.data() == root.data()) c.loadBearing = true;  // the very same ref, one lookup
      });
    });
    if (!kernel::isEnded(info.status)) activeSince_ = std::min(activeSince_, lastAt);
  }

  // Why a blob is kept; empty when it may be reclaimed.
  std::string keepReason(const content::BlobInfo& blob) const {
    if (!content::isValidAddress(blob.address)) return "unknown";  // not ours to judge
    const Cited* found = cited_.find(keyOf(blob.address));
    if (found == nullptr) {
      if (blob.lastTouchedMillis >= sweepStart_ - options_.graceMillis) return "grace";
      return blob.lastTouchedMillis >= cutoff_ ? "running" : "";
    }
    const Cited& c = *found;
    if (c.loadBearing) return "loadBearing";
    if (c.pinnedBy != 0) return sources_.pins[c.pinnedBy - 1].name;
    if (c.keepUntil == kForever) return "running";
    if (now_ < c.keepUntil) return "ttl";
    return "";
  }

  void reclaim() {
    std::vector<content::BlobInfo> doomed;  // deleted after the walk, not during it
    store_.forEachBlob([&](const content::BlobInfo& blob) {
      ++report_.blobsSeen;
      std::string reason = keepReason(blob);
      if (reason.empty())
        doomed.push_back(blob);
      else
        ++report_.keptByReason[reason];
      if (report_.blobsSeen % 4096 == 0) progress("reclaim");
    });
    for (const auto& blob : doomed) {
      try {
        deleteOne(blob);
      } catch (const Error& e) {  // a full disk, a store gone: say how far it got
        rethrowWithContext(e, "the sweep stopped at blob " + blob.address + " after deleting " +
                                  std::to_string(report_.deleted) + " of the " +
                                  std::to_string(doomed.size()) + " blobs nothing needs (" +
                                  std::to_string(report_.bytesFreed) +
                                  " bytes); run it again to finish");
      }
      if ((report_.deleted + report_.spared) % 64 == 0) progress("delete");
    }
    progress("reclaim");
  }

  void deleteOne(const content::BlobInfo& blob) {
    if (options_.dryRun || store_.deleteIfUntouchedSince(blob.address, cutoff_)) {
      ++report_.deleted;
      report_.bytesFreed += blob.size;
    } else {
      ++report_.spared;
    }
  }

  void progress(const char* phase) {
    if (!options_.onProgress) return;
    options_.onProgress(SweepProgress{report_.executionsScanned, -1, report_.blobsSeen, phase});
  }

  content::ContentStore& store_;
  const SweepSources& sources_;
  const SweepOptions& options_;
  CitedTable cited_;
  std::vector<UnreadableExecution> unreadable_;
  SweepReport report_;
  int64_t sweepStart_ = 0;
  int64_t activeSince_ = kForever;  // the oldest last event of a run that has not ended
  int64_t cutoff_ = 0;              // what was touched at or after it is kept
  int64_t now_ = 0;
};

std::string refusalMessage(const std::vector<UnreadableExecution>& unreadable) {
  std::string out = "sweep refused, nothing was deleted: " + std::to_string(unreadable.size()) +
                    " execution(s) could not be read, and what they cite is unknown";
  constexpr std::size_t kNamed = 5;
  bool sealed = false;
  for (std::size_t i = 0; i < unreadable.size(); ++i) {
    sealed = sealed || unreadable[i].reason.starts_with(kSealedReason);
    if (i < kNamed) {
      out += (i == 0 ? ": " : "; ") + unreadable[i].executionId + " (" + unreadable[i].reason + ")";
    }
  }
  if (unreadable.size() > kNamed) {
    out += "; and " + std::to_string(unreadable.size() - kNamed) + " more";
  }
  if (sealed) out += ". To read sealed runs, " + std::string(kernel::kHowToOpenSealed);
  return out;
}

}  // namespace

SweepRefusedError::SweepRefusedError(std::vector<UnreadableExecution> unreadable)
    : FailedPreconditionError(refusalMessage(unreadable)), unreadable_(std::move(unreadable)) {}

SweepReport sweepUnpinnedContent(content::ContentStore& store, const SweepSources& sources,
                                 const SweepOptions& options) {
  return Sweeper(store, sources, options).run();
}

json::value toJson(const SweepReport& r) {
  json::object kept;
  for (const auto& [reason, n] : r.keptByReason) kept[reason] = n;
  return json::object{{"executionsScanned", r.executionsScanned},
                      {"eventsScanned", r.eventsScanned},
                      {"citedAddresses", r.citedAddresses},
                      {"blobsSeen", r.blobsSeen},
                      {"kept", std::move(kept)},
                      {"deleted", r.deleted},
                      {"bytesFreed", r.bytesFreed},
                      {"spared", r.spared},
                      {"dryRun", r.dryRun}};
}

std::string describe(const SweepReport& r) {
  std::string out = std::string(r.dryRun ? "sweep (dry run: nothing deleted)\n" : "sweep\n");
  out += "  scanned: " + std::to_string(r.executionsScanned) + " executions, " +
         std::to_string(r.eventsScanned) + " events, " + std::to_string(r.citedAddresses) +
         " cited addresses, " + std::to_string(r.blobsSeen) + " blobs\n";
  for (const auto& [reason, n] : r.keptByReason) {
    out += "  kept (" + reason + "): " + std::to_string(n) + "\n";
  }
  out += std::string("  ") + (r.dryRun ? "would delete: " : "deleted: ") +
         std::to_string(r.deleted) + " blobs, " + std::to_string(r.bytesFreed) + " bytes\n";
  if (r.spared > 0)
    out += "  spared (touched during the sweep): " + std::to_string(r.spared) + "\n";
  return out;
}

}  // namespace loom::sweep
