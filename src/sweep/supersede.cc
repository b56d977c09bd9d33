#include "loom/sweep/supersede.h"

#include <algorithm>
#include <map>
#include <optional>

#include "log_digest.h"
#include "loom/util/error.h"

namespace loom::sweep {

namespace {

constexpr const char* kType = "RETENTION_SUPERSEDED";

bool sameVersion(const kernel::ExecutionInfo& a, const kernel::ExecutionInfo& b) {
  return a.startedAtMillis == b.startedAtMillis && a.nextSeq == b.nextSeq;
}

// The digest of one copy of a log, when it reads back with every event its info counts;
// nullopt when it is damaged or short.
template <typename Visit>
std::optional<std::string> wholeDigest(const kernel::ExecutionInfo& info, Visit&& visitEvents) {
  LogDigest digest;
  try {
    visitEvents([&](const kernel::Event& e) { digest.add(e); });
  } catch (const DataLossError&) {
    return std::nullopt;
  }
  if (digest.events() != info.nextSeq - 1) return std::nullopt;
  return digest.hex();
}

// The other segments a damaged one's runs may be whole in. Each segment's index is read once,
// keeping only the candidate copies of `ids` (the same version of the log), newest segment first;
// a segment is opened again only to read a candidate, so no more than one is open at a time.
class OtherCopies {
 public:
  OtherCopies(const Archive& archive, const std::vector<kernel::ExecutionInfo>& runs)
      : archive_(archive) {
    std::map<std::string, const kernel::ExecutionInfo*> wanted;
    for (const auto& info : runs) wanted[info.id] = &info;
    std::vector<std::string> names = archive.segmentNames();
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
      try {
        for (const auto& listed : archive.openSegment(*it).listExecutions()) {
          auto run = wanted.find(listed.id);
          if (run != wanted.end() && sameVersion(listed, *run->second)) {
            candidates_[listed.id].push_back(*it);
          }
        }
      } catch (const DataLossError&) {  // an index that does not read holds no sure copy
      }
    }
  }

  // The name of the newest segment holding `info`'s log whole (and, when `own` is known, with
  // the same events).
  std::optional<std::string> find(const kernel::ExecutionInfo& info,
                                  const std::optional<std::string>& own) const {
    auto it = candidates_.find(info.id);
    if (it == candidates_.end()) return std::nullopt;
    for (const std::string& name : it->second) {
      try {
        ArchiveSegment segment = archive_.openSegment(name);
        auto copy =
            wholeDigest(info, [&](const auto& sink) { segment.forEachEventOf(info.id, sink); });
        if (copy && (!own || *copy == *own)) return name;
      } catch (const DataLossError&) {
      }
    }
    return std::nullopt;
  }

 private:
  const Archive& archive_;
  std::map<std::string, std::vector<std::string>> candidates_;  // id -> segments, newest first
};

// Whether the live store holds `info`'s log whole (and, when `own` is known, the same events).
bool wholeLive(const kernel::EventStore& store, const kernel::ExecutionInfo& info,
               const std::optional<std::string>& own) {
  std::optional<kernel::ExecutionInfo> live = store.info(info.id);
  if (!live || !sameVersion(*live, info)) return false;
  auto copy = wholeDigest(info, [&](const auto& sink) { store.scan(info.id, 1, sink); });
  return copy && (!own || *copy == *own);
}

ArchiveSegment openListed(const Archive& everything, const std::string& name) {
  std::vector<std::string> names = everything.segmentNames();
  if (!std::binary_search(names.begin(), names.end(), name)) {
    throw NotFoundError(
        "archive segment '" + name + "' is not in " + everything.store().describe() +
        ": give the segment's name as the refusal of the sweep, erasure or export, or `loom "
        "retention run`, names it");
  }
  try {
    return everything.openSegment(name);
  } catch (const DataLossError& e) {
    throw FailedPreconditionError(
        "archive segment '" + name + "' cannot be superseded: its index does not read (" +
        e.what() +
        "), so which runs it holds is unknown and none can be proved whole elsewhere; "
        "restore it from a backup");
  }
}

// A damaged block's message without the remedy it names (this command).
std::string withoutRemedy(std::string message) {
  std::size_t remedy = message.find("; restore the segment from a backup");
  if (remedy != std::string::npos) message.resize(remedy);
  return message;
}

std::string listed(const std::vector<std::string>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size() && i < 10; ++i) out += (i ? ", '" : "'") + ids[i] + "'";
  if (ids.size() > 10) out += ", and " + std::to_string(ids.size() - 10) + " more";
  return out;
}

}  // namespace

std::set<std::string> supersededSegments(const kernel::EventStore& store) {
  std::set<std::string> out;
  for (const auto& e : store.readControlOfTypes({kType})) {
    const json::value* segment = e.data.if_contains("segment");
    if (segment == nullptr || !segment->is_string()) {
      throw DataLossError("control event #" + std::to_string(e.seq) + " (" + kType +
                          ") names no segment: it is not what Loom writes");
    }
    out.emplace(segment->get_string());
  }
  return out;
}

Archive readableArchive(std::shared_ptr<const ArchiveStore> archive,
                        const kernel::EventStore& store) {
  return Archive(std::move(archive), supersededSegments(store));
}

SupersedeReport supersedeSegment(kernel::EventStore& store,
                                 const std::shared_ptr<const ArchiveStore>& archive,
                                 const std::string& name, const SupersedeOptions& options) {
  SupersedeReport r;
  r.segment = name;
  r.dryRun = options.dryRun;
  r.location = archive->locate(name);
  std::set<std::string> retired = supersededSegments(store);
  if (retired.contains(name)) {
    r.alreadySuperseded = true;
    return r;
  }
  ArchiveSegment segment = openListed(Archive(archive), name);
  r.location = segment.location();
  std::vector<kernel::ExecutionInfo> infos = segment.listExecutions();
  r.executions = static_cast<int64_t>(infos.size());

  // Its own blocks: the digest of each that still reads, to compare with the copies.
  std::map<std::string, std::string> own;
  for (const auto& info : infos) {
    try {
      LogDigest digest;
      segment.forEachEventOf(info.id, [&](const kernel::Event& e) { digest.add(e); });
      own[info.id] = digest.hex();
    } catch (const DataLossError& e) {
      r.damaged.push_back(info.id);
      if (r.damage.empty()) r.damage = withoutRemedy(e.what());
    }
  }
  if (r.damaged.empty()) {
    throw FailedPreconditionError("archive segment '" + name + "' reads back whole (its " +
                                  std::to_string(infos.size()) +
                                  " runs): there is nothing to supersede, and the readers read it");
  }

  retired.insert(name);
  Archive elsewhere(archive, retired);
  OtherCopies others(elsewhere, infos);
  std::vector<std::string> missing;
  for (const auto& info : infos) {
    auto it = own.find(info.id);
    std::optional<std::string> digest =
        it == own.end() ? std::nullopt : std::optional<std::string>(it->second);
    if (auto held = others.find(info, digest)) {
      r.heldIn.insert(*held);
    } else if (wholeLive(store, info, digest)) {
      ++r.liveCopies;
    } else {
      missing.push_back(info.id);
    }
  }
  if (!missing.empty()) {
    throw FailedPreconditionError(
        "archive segment '" + name + "' cannot be superseded: " + std::to_string(missing.size()) +
        " of its " + std::to_string(infos.size()) +
        " runs have no whole copy in another segment or a live log (" + listed(missing) +
        "), so it holds their only copy; restore it from a backup");
  }
  if (options.dryRun) return r;
  if (options.beforeJournaling) options.beforeJournaling();

  json::object data{{"segment", name},
                    {"executions", r.executions},
                    {"damaged", static_cast<int64_t>(r.damaged.size())},
                    {"heldIn", json::array(r.heldIn.begin(), r.heldIn.end())},
                    {"liveCopies", r.liveCopies}};
  kernel::appendControlAtEnd(
      store, kernel::ControlEvent{0, kType, options.clock->nowMillis(), std::move(data)});
  if (!supersededSegments(store).contains(name)) {
    throw DataLossError("the mark superseding archive segment '" + name +
                        "' does not read back from the control log; run again");
  }
  return r;
}

json::value toJson(const SupersedeReport& r) {
  return json::object{{"segment", r.segment},
                      {"location", r.location},
                      {"executions", r.executions},
                      {"damagedRuns", json::array(r.damaged.begin(), r.damaged.end())},
                      {"damage", r.damage},
                      {"heldIn", json::array(r.heldIn.begin(), r.heldIn.end())},
                      {"liveCopies", r.liveCopies},
                      {"alreadySuperseded", r.alreadySuperseded},
                      {"dryRun", r.dryRun}};
}

std::string describe(const SupersedeReport& r) {
  if (r.alreadySuperseded) {
    return "archive segment " + r.segment + " was superseded before; nothing to do\n";
  }
  std::string out = "archive segment " + r.segment + " (" + r.location +
                    "): " + std::to_string(r.damaged.size()) + " of its " +
                    std::to_string(r.executions) + " runs do not read back (" + r.damage + ")\n";
  out += "  every run it holds is whole elsewhere: " + std::to_string(r.liveCopies) +
         " in their live logs";
  if (!r.heldIn.empty()) out += ", the others in";
  for (const auto& segment : r.heldIn) out += " " + segment;
  out += "\n";
  if (r.dryRun)
    return out + "  dry run: a real run would mark it superseded; nothing was changed\n";
  return out +
         "  marked superseded (journaled): the sweep, erasure, export and `loom log` no longer "
         "read it; keep or move the file as you wish\n";
}

}  // namespace loom::sweep
