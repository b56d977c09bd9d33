// Shared by the erasure, export and claim-check-refs tests: a small world (memory event,
// snapshot, content and key stores on a ManualClock, an archive folder), executions built
// from step outputs, and store wrappers for refusals and crash injection. Test-only.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "content/claim_check_envelope.h"
#include "loom/compliance/erase.h"
#include "loom/compliance/memory_key_store.h"
#include "loom/content/forwarding_content_store.h"
#include "loom/content/memory_content_store.h"
#include "loom/effects/taint.h"
#include "loom/kernel/forwarding_event_store.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/memory_snapshot_store.h"
#include "loom/sweep/archive.h"
#include "loom/util/error.h"
#include "support/faulty_event_store.h"
#include "support/temp_dir.h"

namespace loom::compliance::testutil {

using loom::testing::TempDir;

namespace fs = std::filesystem;

// A content store that forwards everything but declares fewer capabilities.
class MaskedContentStore : public content::ForwardingContentStore {
 public:
  MaskedContentStore(content::ContentStore& inner, content::ContentCapabilities caps)
      : ForwardingContentStore(inner), caps_(caps) {}
  content::ContentCapabilities capabilities() const override { return caps_; }

 private:
  content::ContentCapabilities caps_;
};

// The fault-injecting event store of the tests (tests/support/faulty_event_store.h).
using CrashingEventStore = loom::testing::FaultyEventStore;

// The stores of one Loom home, in memory.
struct World {
  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>();
  kernel::MemoryEventStore events;
  kernel::MemorySnapshotStore snapshots;
  content::MemoryContentStore content{clock};
  MemoryKeyStore keys;
  TempDir dir;
  sweep::Archive archive{dir.path() / "archive"};

  EraseCoordinatorOptions options(kernel::EventStore* eventStore = nullptr,
                                  content::ContentStore* contentStore = nullptr) {
    return EraseCoordinatorOptions{eventStore ? *eventStore : events,
                                   keys,
                                   contentStore ? contentStore : &content,
                                   &archive,
                                   &snapshots,
                                   clock};
  }

  // The envelope the claim-check middleware records for `bytes`, which it puts.
  json::value offload(const std::string& bytes, bool retain = true) {
    std::string address = content.put(bytes);
    return content::toJson(content::ClaimCheckEnvelope{address, static_cast<int64_t>(bytes.size()),
                                                       json::object{{"preview", "p"}}, retain});
  }

  // An ended execution of `subject` (none when empty) with one tool step per output; the
  // subject gets a data key, as sealing would give it. The clock then moves on a second.
  void run(const std::string& id, const std::string& subject, std::vector<json::value> outputs) {
    std::optional<std::string> s;
    if (!subject.empty()) {
      s = subject;
      keys.getOrCreate(subject);
    }
    int64_t now = clock->nowMillis();
    std::vector<kernel::Event> log{kernel::executionStarted("wf", json::object{}, s, now)};
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      log.push_back(kernel::stepCompleted("agent#turn:" + std::to_string(i + 1) + ":tool:0", "tool",
                                          "fetch", std::move(outputs[i]), now));
    }
    log.push_back(kernel::executionCompleted(json::value(1), now));
    events.append(id, 1, std::move(log));
    clock->advance(1000);  // what comes next (an erasure, a put) happens later
  }

  // Moves a live execution into a new archive segment (retention with archiving).
  void archiveExecution(const std::string& id) {
    sweep::ArchiveWriter writer(dir.path() / "archive");
    writer.add(*events.info(id), events.read(id));
    writer.finish();
    events.remove(id);
  }

  // A snapshot of `id` whose state cites `value`.
  void snapshot(const std::string& id, const std::string& subject, json::value value) {
    snapshots.put(kernel::Snapshot{
        id, 1, json::object{{"version", 1}, {"subject", subject}, {"steps", std::move(value)}}});
  }

  bool hasKey(const std::string& subject) const {
    auto s = keys.subjects();
    return std::find(s.begin(), s.end(), subject) != s.end();
  }
  std::vector<std::string> controlTypes() const {
    std::vector<std::string> out;
    for (const auto& e : events.readControl(1)) out.push_back(e.type);
    return out;
  }
};

inline std::string addressOf(const json::value& envelope) {
  return std::string(envelope.at("ref").at(content::kContentRefKey).as_string());
}

}  // namespace loom::compliance::testutil
