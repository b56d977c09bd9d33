#include "loom/sweep/retention.h"

#include <map>

#include <cstdio>
#include <vector>

#include "loom/sweep/archive.h"
#include "loom/util/error.h"

namespace loom::sweep {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kDayMillis = 24LL * 3600 * 1000;

void appendRunEvent(kernel::EventStore& store, const RetentionReport& r, int64_t atMillis) {
  json::object data{
      {"cutoff", formatTimestamp(r.cutoffMillis)},
      {"archived", r.archived},
      {"removed", r.removed},
      {"segment", r.segmentName.empty() ? json::value() : json::value(r.segmentName)}};
  kernel::appendControlAtEnd(store,
                             kernel::ControlEvent{0, "RETENTION_RUN", atMillis, std::move(data)});
}

std::string humanBytes(int64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

void removeLeftoverTempSegments(const fs::path& stagingDir) {
  std::error_code ec;
  if (!fs::is_directory(stagingDir, ec)) return;
  for (const auto& f : fs::directory_iterator(stagingDir, ec)) {
    std::string name = f.path().filename().string();
    if (name.starts_with(".segment-") && name.ends_with(".tmp")) fs::remove(f.path(), ec);
  }
}

// Each archived execution's (startedAt, nextSeq): the version of its log a segment holds.
std::map<std::string, std::pair<int64_t, int64_t>> archivedVersions(const Archive& archive) {
  std::map<std::string, std::pair<int64_t, int64_t>> out;
  archive.forEachSegment([&](const ArchiveSegment& segment) {
    for (const auto& info : segment.listExecutions()) {
      out[info.id] = std::make_pair(info.startedAtMillis, info.nextSeq);
    }
  });
  return out;
}

}  // namespace

RetentionReport runRetention(kernel::EventStore& store, kernel::SnapshotStore* snapshots,
                             const std::shared_ptr<ArchiveStore>& archiveStore,
                             const RetentionOptions& options) {
  if (options.afterDays < 0 || (options.afterMillis && *options.afterMillis < 0)) {
    throw InvalidArgumentError("retention age must not be negative (afterDays " +
                               std::to_string(options.afterDays) + ")");
  }
  if (options.pageSize == 0) throw InvalidArgumentError("retention page size must be at least 1");
  RetentionReport r;
  r.archive = options.archive;
  r.dryRun = options.dryRun;
  int64_t now = options.clock->nowMillis();
  r.cutoffMillis =
      now - (options.afterMillis ? *options.afterMillis : options.afterDays * kDayMillis);

  // 0. What a killed earlier run left: its temp segment (retention runs one at a time per home:
  // the caller holds the home's lock), and the logs it archived but did not remove yet, which
  // are removed now without being archived a second time.
  removeLeftoverTempSegments(archiveStore->stagingDir());
  Archive archive(archiveStore);
  std::map<std::string, std::pair<int64_t, int64_t>> archived = archivedVersions(archive);

  // 1. Select, and stream each selected log into the segment (nothing is removed yet).
  std::vector<std::string> ids;
  std::unique_ptr<ArchiveWriter> writer;
  kernel::ExecutionFilter filter;
  filter.endedBeforeMillis = r.cutoffMillis;
  filter.limit = options.pageSize;
  kernel::forEachExecution(store, filter, [&](const kernel::ExecutionInfo& info) {
    if (!kernel::isEnded(info.status) || !info.endedAtMillis ||
        *info.endedAtMillis >= r.cutoffMillis) {
      return;  // the store's filter says so already; never trust a remove to it alone
    }
    ++r.scanned;
    r.bytesBefore += info.logBytes;
    ids.push_back(info.id);
    if (options.dryRun || !options.archive) return;
    auto copy = archived.find(info.id);
    if (copy != archived.end() &&
        copy->second == std::make_pair(info.startedAtMillis, info.nextSeq)) {
      ++r.alreadyArchived;  // this very log is in a segment already
      return;
    }
    if (!writer) {
      writer = std::make_unique<ArchiveWriter>(
          archiveStore, ArchiveWriterOptions{options.clock, options.compressionLevel});
    }
    writer->add(info, [&](const std::function<void(const kernel::Event&)>& sink) {
      store.scan(info.id, 1, sink);
    });
  });
  if (options.dryRun || ids.empty()) return r;

  // 2. Make the segment durable, and check it reads back, before anything is removed.
  if (writer) {
    std::string name = writer->finish();
    ArchiveSegment segment = archive.openSegment(name);
    for (const auto& id : ids) {
      if (!segment.contains(id) && !archived.contains(id)) {
        throw DataLossError("archive segment '" + segment.location() + "' lacks execution '" + id +
                            "' right after it was written; nothing was removed");
      }
    }
    r.segmentName = name;
    r.segmentPath = segment.location();
    r.bytesAfter = segment.fileBytes();
    r.archived = static_cast<int64_t>(ids.size()) - r.alreadyArchived;
  }

  // 3. Remove: snapshots first, so no snapshot outlives its log.
  for (const auto& id : ids) {
    try {
      if (snapshots != nullptr) r.snapshotsRemoved += snapshots->remove(id);
      if (store.remove(id)) ++r.removed;
    } catch (const Error& e) {
      rethrowWithContext(
          e, "retention stopped while removing execution '" + id + "' (" +
                 std::to_string(r.removed) + " of " + std::to_string(ids.size()) +
                 " live logs removed" +
                 (r.segmentPath.empty()
                      ? std::string()
                      : "; every one not removed is also archived in '" + r.segmentPath + "'") +
                 "; run retention again to finish)");
    }
  }
  appendRunEvent(store, r, now);
  return r;
}

json::value toJson(const RetentionReport& r) {
  return json::object{
      {"cutoff", formatTimestamp(r.cutoffMillis)},
      {"scanned", r.scanned},
      {"alreadyArchived", r.alreadyArchived},
      {"archived", r.archived},
      {"removed", r.removed},
      {"snapshotsRemoved", r.snapshotsRemoved},
      {"segment", r.segmentPath.empty() ? json::value() : json::value(r.segmentPath)},
      {"bytesBefore", r.bytesBefore},
      {"bytesAfter", r.bytesAfter},
      {"archive", r.archive},
      {"dryRun", r.dryRun}};
}

std::string describe(const RetentionReport& r) {
  std::string out = "retention: " + std::to_string(r.scanned) + " execution" +
                    (r.scanned == 1 ? "" : "s") + " ended before " +
                    formatTimestamp(r.cutoffMillis) + " (" + humanBytes(r.bytesBefore) +
                    " of live log)\n";
  if (r.dryRun) {
    if (r.scanned == 0) return out + "  dry run: nothing to do\n";
    return out + "  dry run: would " + (r.archive ? "archive them into a new segment and " : "") +
           "remove their live logs; nothing was changed\n";
  }
  if (!r.segmentPath.empty()) {
    out += "  archived " + std::to_string(r.archived) + " into " + r.segmentPath + " (" +
           humanBytes(r.bytesAfter) + ")\n";
  } else if (r.scanned > 0 && !r.archive) {
    out += "  not archived (storage.retention.archive = false)\n";
  }
  out += "  removed " + std::to_string(r.removed) + " live log" + (r.removed == 1 ? "" : "s") +
         " and " + std::to_string(r.snapshotsRemoved) + " snapshot" +
         (r.snapshotsRemoved == 1 ? "" : "s") + "\n";
  return out;
}

}  // namespace loom::sweep
