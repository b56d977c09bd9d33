#include "loom/sweep/sweep.h"

#include <array>
#include <limits>

#include "cited_table.h"
#include "loom/sweep/content_walker.h"
#include "loom/util/error.h"

namespace loom::sweep {
namespace {

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
    for (std::size_t i = 0; i < sources_.pins.size() && i < 255; ++i) {
      sources_.pins[i].visitAddresses([&](std::string_view a) {
        if (!content::isValidAddress(a)) return;
        auto& c = cited_[keyOf(a)];
        if (c.pinnedBy == 0) c.pinnedBy = static_cast<uint8_t>(i + 1);
      });
    }
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
    kernel::ExecutionFilter page;
    page.limit = 256;
    for (;;) {
      auto infos = sources_.liveLogs->list(page);
      for (const auto& info : infos) scanExecution(info);
      if (infos.size() < page.limit) break;
      page.afterId = infos.back().id;
    }
  }

  void scanExecution(const kernel::ExecutionInfo& info) {
    int64_t keepUntil = kForever;
    if (kernel::isEnded(info.status)) {
      int64_t end = info.endedAtMillis.value_or(0);
      keepUntil = end > kForever - options_.ttlMillis ? kForever : end + options_.ttlMillis;
    }
    sources_.liveLogs->scan(info.id, 1, [&](const kernel::Event& e) {
      ++report_.eventsScanned;
      std::string_view root;  // the load-bearing ref of this event, if any
      forEachRetainRoot(e, [&](std::string_view a) { root = a; });
      visitCitedAddresses(e, [&](std::string_view a) {
        auto& c = cited_[keyOf(a)];
        c.keepUntil = std::max(c.keepUntil, keepUntil);
        if (a.data() == root.data()) c.loadBearing = true;  // the very same ref, one lookup
      });
    });
    ++report_.executionsScanned;
    progress("scan");
  }

  // Why a blob is kept; empty when it may be reclaimed.
  std::string keepReason(const content::BlobInfo& blob) const {
    if (!content::isValidAddress(blob.address)) return "unknown";  // not ours to judge
    const Cited* found = cited_.find(keyOf(blob.address));
    if (found == nullptr) {
      return blob.lastTouchedMillis >= sweepStart_ - options_.graceMillis ? "grace" : "";
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
    int64_t cutoff = sweepStart_ - options_.graceMillis;
    for (const auto& blob : doomed) {
      if (options_.dryRun) {
        ++report_.deleted;
        report_.bytesFreed += blob.size;
      } else if (store_.deleteIfUntouchedSince(blob.address, cutoff)) {
        ++report_.deleted;
        report_.bytesFreed += blob.size;
      } else {
        ++report_.spared;
      }
    }
    progress("reclaim");
  }

  void progress(const char* phase) {
    if (!options_.onProgress) return;
    options_.onProgress(SweepProgress{report_.executionsScanned, -1, report_.blobsSeen, phase});
  }

  content::ContentStore& store_;
  const SweepSources& sources_;
  const SweepOptions& options_;
  CitedTable cited_;
  SweepReport report_;
  int64_t sweepStart_ = 0;
  int64_t now_ = 0;
};

}  // namespace

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
