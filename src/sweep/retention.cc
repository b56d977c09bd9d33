#include "loom/sweep/retention.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "archive_format.h"
#include "log_digest.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/supersede.h"
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
  // Segments that did not read back as the live logs they hold (their runs archived again).
  if (!r.damagedSegments.empty()) {
    data["damagedSegments"] = json::array(r.damagedSegments.begin(), r.damagedSegments.end());
  }
  // The segments that hold the only copies of the logs removed without archiving them again.
  if (!r.alreadyArchivedIn.empty()) {
    data["alreadyArchivedIn"] = json::array(r.alreadyArchivedIn.begin(), r.alreadyArchivedIn.end());
  }
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

// The version of an execution's log a segment holds (its startedAt and nextSeq), and where.
struct ArchivedVersion {
  int64_t startedAtMillis = 0;
  int64_t nextSeq = 0;
  std::string segment;
  bool matches(const kernel::ExecutionInfo& info) const {
    return startedAtMillis == info.startedAtMillis && nextSeq == info.nextSeq;
  }
};

std::map<std::string, ArchivedVersion> archivedVersions(const Archive& archive) {
  std::map<std::string, ArchivedVersion> out;
  archive.forEachSegment([&](const ArchiveSegment& segment) {
    for (const auto& info : segment.listExecutions()) {
      out[info.id] = {info.startedAtMillis, info.nextSeq, segment.name()};
    }
  });
  return out;
}

// A live log is removed only when its copy in `segment` reads back (every block's checksum)
// and holds each of its events unchanged: a segment damaged on its way to the disk, or a
// writer that dropped or changed an event, stops retention before anything is lost. Both
// sides stream: one event of each in memory.
void requireSameAsLive(const kernel::EventStore& store, const ArchiveSegment& segment,
                       const std::string& id) {
  LogDigest live;
  LogDigest copy;
  store.scan(id, 1, [&](const kernel::Event& e) { live.add(e); });
  bool held = segment.forEachEventOf(id, [&](const kernel::Event& e) { copy.add(e); });
  if (held && live.events() == copy.events() && live.hex() == copy.hex()) return;
  throw DataLossError("archive segment '" + segment.location() + "' does not hold execution '" +
                      id + "' as its live log does (" + std::to_string(live.events()) +
                      " live events, " + std::to_string(copy.events()) +
                      " archived, not the same)");
}

// Whether segment `name` holds `id` as its live log is now; false when that copy is damaged
// or differs (the caller archives the log again). Anything but damage propagates.
bool readsBackAsLive(const kernel::EventStore& store, const Archive& archive,
                     const std::string& name, const std::string& id,
                     std::map<std::string, ArchiveSegment>& segments) {
  auto it = segments.find(name);
  if (it == segments.end()) it = segments.emplace(name, archive.openSegment(name)).first;
  try {
    requireSameAsLive(store, it->second, id);
    return true;
  } catch (const DataLossError&) {
    return false;
  }
}

// Whether every execution `segment` lists reads back whole (each block's checksum): a segment
// refused as a whole by the sweep, erasure and export may hold no removed log's only copy.
bool readsWhole(const ArchiveSegment& segment) {
  try {
    for (const auto& info : segment.listExecutions()) {
      segment.forEachEventOf(info.id, [](const kernel::Event&) {});
    }
    return true;
  } catch (const DataLossError&) {
    return false;
  }
}

// Journals the segments the logs about to be removed rely on: the one just written and those
// holding the only copies of logs removed without archiving them again. Before any remove, so
// a run killed while removing leaves them named (RETENTION_RUN comes only at the end).
void appendArchivedEvent(kernel::EventStore& store, const RetentionReport& r, int64_t atMillis) {
  if (r.segmentName.empty() && r.alreadyArchivedIn.empty()) return;
  json::object data{
      {"segment", r.segmentName.empty() ? json::value() : json::value(r.segmentName)},
      {"alreadyArchivedIn", json::array(r.alreadyArchivedIn.begin(), r.alreadyArchivedIn.end())}};
  kernel::appendControlAtEnd(
      store, kernel::ControlEvent{0, "RETENTION_ARCHIVED", atMillis, std::move(data)});
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
  Archive archive = readableArchive(archiveStore, store);  // a superseded segment is no copy
  std::map<std::string, ArchivedVersion> archived = archivedVersions(archive);
  std::map<std::string, ArchiveSegment> segments;  // opened by readsBackAsLive

  // 1. Select, and stream each selected log into the segment (nothing is removed yet).
  std::vector<std::string> ids;
  std::unique_ptr<ArchiveWriter> writer;
  auto archiveAnew = [&](const kernel::ExecutionInfo& info) {
    if (options.dryRun) return;  // a dry run checks the copies it would rely on, writes nothing
    if (!writer) {
      writer = std::make_unique<ArchiveWriter>(
          archiveStore, ArchiveWriterOptions{options.clock, options.compressionLevel});
    }
    writer->add(info, [&](const std::function<void(const kernel::Event&)>& sink) {
      store.scan(info.id, 1, sink);
    });
  };
  std::vector<std::pair<kernel::ExecutionInfo, std::string>> foundArchived;  // and its segment
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
    if (!options.archive) return;
    auto copy = archived.find(info.id);
    if (copy != archived.end() && copy->second.matches(info)) {
      if (readsBackAsLive(store, archive, copy->second.segment, info.id, segments)) {
        foundArchived.emplace_back(info, copy->second.segment);  // in a segment already
        return;
      }
      ++r.rearchived;  // that copy is damaged: the new segment holds it again
      r.damagedSegments.insert(copy->second.segment);
    }
    archiveAnew(info);
  });
  // A whole copy in a damaged segment is archived again too: that segment is refused by the
  // sweep, erasure and export as a whole, so it must not be any removed log's only copy. A
  // segment relied on is read whole first (its other blocks too).
  std::set<std::string> removedAsArchived, whole;
  for (const auto& [info, segment] : foundArchived) {
    if (!r.damagedSegments.contains(segment) && !whole.contains(segment)) {
      if (readsWhole(segments.at(segment))) {
        whole.insert(segment);
      } else {
        r.damagedSegments.insert(segment);
      }
    }
    if (r.damagedSegments.contains(segment)) {
      ++r.rearchived;
      archiveAnew(info);
    } else {
      ++r.alreadyArchived;
      r.alreadyArchivedIn.insert(segment);
      removedAsArchived.insert(info.id);
    }
  }
  if (options.dryRun || ids.empty()) return r;

  // 2. Make the segment durable, and check it reads back, before anything is removed.
  if (writer) {
    std::string name = writer->finish();
    ArchiveSegment segment = archive.openSegment(name);
    for (const auto& id : ids) {
      if (!segment.contains(id) && !removedAsArchived.contains(id)) {
        throw DataLossError("archive segment '" + segment.location() + "' lacks execution '" + id +
                            "' right after it was written; nothing was removed");
      }
    }
    try {
      for (const auto& info : segment.listExecutions()) requireSameAsLive(store, segment, info.id);
    } catch (const DataLossError& e) {
      rethrowWithContext(e,
                         "retention removed nothing: the segment it wrote does not read back "
                         "(check the archive's disk, then run retention again: it archives "
                         "those logs anew)");
    }
    r.segmentName = name;
    r.segmentPath = segment.location();
    r.bytesAfter = segment.fileBytes();
    r.archived = static_cast<int64_t>(ids.size()) - r.alreadyArchived;
  }

  // 3. Remove: snapshots first, so no snapshot outlives its log.
  appendArchivedEvent(store, r, now);
  for (const auto& id : ids) {
    try {
      if (options.beforeRemoving) options.beforeRemoving();
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

void requireJournaledSegments(const kernel::EventStore& store, const Archive& archive) {
  std::vector<std::string> present = archive.segmentNames();     // sorted
  std::set<std::string> superseded = supersededSegments(store);  // no one's only copy
  for (const auto& e :
       store.readControlOfTypes({"RETENTION_RUN", "RETENTION_ARCHIVED", "RETENTION_SUPERSEDED"})) {
    std::vector<std::string> names;
    if (e.type != "RETENTION_SUPERSEDED") {
      const json::value* segment = e.data.if_contains("segment");
      if (segment != nullptr && segment->is_string()) names.emplace_back(segment->get_string());
    }
    // The segments the runs rely on: those holding the only copies of removed logs, and those
    // holding the copies that made a damaged segment superseded.
    for (const char* member : {"alreadyArchivedIn", "heldIn"}) {
      const json::value* relied = e.data.if_contains(member);
      if (relied == nullptr || !relied->is_array()) continue;
      for (const auto& n : relied->get_array()) {
        if (n.is_string()) names.emplace_back(n.get_string());
      }
    }
    for (const auto& name : names) {
      if (superseded.contains(name)) continue;
      if (std::binary_search(present.begin(), present.end(), name)) continue;
      throw UnavailableError(
          "archive segment '" + name + "', which retention wrote or relied on (control event #" +
          std::to_string(e.seq) + "), is not in " + archive.store().describe() +
          ": its runs' only copy is there, and without it they would read as gone and their "
          "blobs as unneeded; mount the archive's disk or restore the segment from a backup, "
          "then run again");
    }
  }
}

json::value toJson(const RetentionReport& r) {
  return json::object{
      {"cutoff", formatTimestamp(r.cutoffMillis)},
      {"scanned", r.scanned},
      {"alreadyArchived", r.alreadyArchived},
      {"rearchived", r.rearchived},
      {"damagedSegments", json::array(r.damagedSegments.begin(), r.damagedSegments.end())},
      {"alreadyArchivedIn", json::array(r.alreadyArchivedIn.begin(), r.alreadyArchivedIn.end())},
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
    out += "  dry run: would " +
           std::string(r.archive ? "archive them into a new segment and " : "") +
           "remove their live logs; nothing was changed\n";
    for (const auto& damaged : r.damagedSegments) {
      out += "  segment " + damaged +
             " does not read back whole: a real run would archive the selected logs it holds "
             "again and leave it as it is; the sweep, erasure and export refuse it until it is "
             "restored from a backup, or superseded (`loom retention supersede " +
             damaged + "`) once every run it holds is whole elsewhere\n";
    }
    return out;
  }
  if (!r.segmentPath.empty()) {
    out += "  archived " + std::to_string(r.archived) + " into " + r.segmentPath + " (" +
           humanBytes(r.bytesAfter) + ")\n";
    for (const auto& damaged : r.damagedSegments) {
      out += "  segment " + damaged +
             " did not read back whole: the selected logs it held are archived again, but it may "
             "hold the only copies of runs removed before, so it is left as it is; keep it, check "
             "the archive's disk and restore it from a backup (the sweep, erasure and export "
             "refuse a damaged segment), or, once every run it holds is whole elsewhere, retire "
             "it with `loom retention supersede " +
             damaged + "`\n";
    }
  } else if (r.scanned > 0 && !r.archive) {
    out += "  not archived (storage.retention.archive = false)\n";
  }
  out += "  removed " + std::to_string(r.removed) + " live log" + (r.removed == 1 ? "" : "s") +
         " and " + std::to_string(r.snapshotsRemoved) + " snapshot" +
         (r.snapshotsRemoved == 1 ? "" : "s") + "\n";
  return out;
}

}  // namespace loom::sweep
