// The end of a seed: every run is driven to its end with the faults off, then the invariants
// are checked (docs/testing.md, "What the simulator checks").
#include <set>

#include "app/maintenance.h"
#include "compliance/claim_check_refs.h"
#include "loom/compliance/erase.h"
#include "loom/compliance/export.h"
#include "loom/kernel/event_store.h"
#include "world.h"

namespace loom::sim {
namespace {

bool readsErased(const kernel::Event& e) { return e.data.contains(kernel::kErasedKey); }

}  // namespace

void World::onEffect(const effects::EffectContext& call) {
  count("effects");
  // A step the log records as completed never runs again: at most one in flight repeats.
  try {
    reader().store().scan(call.executionId, 1, [&](const kernel::Event& e) {
      if (e.type != kernel::EventType::kStepCompleted || readsErased(e)) return;
      if (e.data.at("stepId") == call.stepId.c_str()) {
        violation("step " + call.stepId + " of " + call.executionId +
                  " ran again after the log recorded it (attempt " + std::to_string(call.attempt) +
                  ")");
      }
    });
  } catch (const std::exception&) {
    // Its subject was erased meanwhile: nothing to compare with.
  }
}

void World::drain() {
  faults_ = false;
  note("drain: no more faults; every run is driven to its end");
  for (auto& r : runners_) r->restart();
  operator_->restart();
  for (int round = 0; round < 12; ++round) {
    std::vector<std::string> open;
    for (const std::string& id : openRuns()) {
      for (const SimRun& run : runs_) {
        if (run.id == id && !erased(run.subject)) open.push_back(id);
      }
    }
    if (open.empty()) return;
    jumpClock(600'000 + 1'000, "timers, retries and leases are due");
    for (SimRun& run : runs_) {
      if (std::find(open.begin(), open.end(), run.id) == open.end()) continue;
      try {
        std::multiset<std::string> received;
        reader().store().scan(run.id, 1, [&](const kernel::Event& e) {
          if (e.type == kernel::EventType::kSignalReceived && !readsErased(e)) {
            received.insert(std::string(e.data.at("name").as_string()));
          }
        });
        for (const std::string& name : run.signals) {
          if (!received.count(name)) ops().runtime().signal(run.id, name, nullptr);
        }
        if (!ended(run.id)) ops().runtime().resume(run.id);
      } catch (const std::exception& e) {
        note("drain: " + run.id + ": " + e.what());
      }
    }
  }
}

void World::checkInvariants() {
  // Erasures that were refused or cut short are run again, once time moved on: a repeated
  // erasure finishes them, and deletes what the subject's runs still wrote meanwhile (and a blob
  // its last put touched in the very millisecond of the erasure's cutoff, which the erasure
  // cannot tell from a put during it, so keeps).
  jumpClock(1'000, "before the erasures are repeated");
  for (const std::string& subject : erasedSubjects_) erase(subject);
  // Nothing runs now: a sweep reclaims what nothing needs, and must spare what is needed.
  sweep();
  std::vector<kernel::ExecutionInfo> live = reader().store().list({});
  for (const kernel::ExecutionInfo& info : live) {
    checkLog(info);
    if (erased(info.subject)) continue;
    checkBlobs(info);
    if (!kernel::isEnded(info.status)) {
      std::optional<kernel::ParkState> park = kernel::currentPark(reader().store(), info);
      violation("run " + info.id + " did not end: " + std::string(kernel::statusName(info.status)) +
                (park ? " (" + park->reason + ": " + park->detail + ")" : ""));
    }
  }
  for (const std::string& subject : erasedSubjects_) checkErased(subject);
  for (const std::string& subject : subjects_) {
    if (!erasedSubjects_.count(subject)) checkExport(subject);
  }
}

void World::checkLog(const kernel::ExecutionInfo& info) {
  int64_t expected = 1;
  std::set<std::string> steps;
  reader().store().scan(info.id, 1, [&](const kernel::Event& e) {
    if (e.seq != expected) {
      violation("log of " + info.id + ": seq " + std::to_string(e.seq) + " where " +
                std::to_string(expected) + " was due");
    }
    expected = e.seq + 1;
    if (e.type == kernel::EventType::kStepCompleted && !readsErased(e)) {
      std::string step(e.data.at("stepId").as_string());
      if (!steps.insert(step).second) violation("log of " + info.id + ": step " + step + " twice");
    }
    if (e.type == kernel::EventType::kExecutionFailed && !readsErased(e)) {
      std::string why = json::toText(e.data.at("error"));
      if (why.find("simulated") == std::string::npos) {
        violation("run " + info.id + " failed, not by an injected fault: " + why);
      } else if (why.find("simulated disk fault") != std::string::npos) {
        // A disk that fails a store's write is the store's failure, not the run's: nothing is
        // recorded and the run resumes (docs/operations.md).
        violation("run " + info.id + " was marked failed by a disk fault: " + why);
      } else {
        count("runs.failedByInjectedFault");
      }
    }
  });
  if (expected != info.nextSeq) {
    violation("log of " + info.id + ": " + std::to_string(expected - 1) +
              " events read, the metadata says " + std::to_string(info.nextSeq - 1));
  }
}

void World::checkBlobs(const kernel::ExecutionInfo& info) {
  app::App& app = reader();
  sweep::Archive archive(app.archiveStore());  // every segment: no trust in the readers' filter
  compliance::CitationSources sources{&app.store(), &archive, &app.snapshots(), app.keys()};
  for (const auto& [address, ref] : compliance::claimCheckRefsOf(sources, info.id)) {
    citedByLiving_.insert(address);
    try {
      if (!app.contentStore()->get(address, info.subject) && !reclaimedFairly(address, info.id)) {
        violation("blob " + address + " cited by " + info.id + " is lost");
      }
    } catch (const std::exception& e) {
      violation("blob " + address + " cited by " + info.id + " does not read: " + e.what());
    }
  }
}

void World::checkErased(const std::string& subject) {
  app::App& app = reader();
  kernel::ExecutionFilter filter;
  filter.subject = subject;
  for (const kernel::ExecutionInfo& info : app.store().list(filter)) {
    app.store().scan(info.id, 1, [&](const kernel::Event& e) {
      if (!readsErased(e)) {
        violation("event " + std::to_string(e.seq) + " of " + info.id + " of erased " + subject +
                  " still reads");
      }
    });
  }
  for (const std::string& address : puts_[subject]) {
    bool keptForOthers = citedByLiving_.count(address) > 0;
    for (const auto& [other, addresses] : puts_) {
      keptForOthers = keptForOthers || (other != subject && addresses.count(address) > 0);
    }
    if (!keptForOthers && app.contentStore()->has(address)) {
      violation("blob " + address + " of erased " + subject + " is still stored");
    }
  }
}

void World::checkExport(const std::string& subject) {
  app::App& app = reader();
  sweep::Archive archive(app.archiveStore());  // every segment: no trust in the readers' filter
  json::object doc;
  try {
    doc = compliance::exportSubject(app::exportOptions(app, archive), subject);
  } catch (const std::exception& e) {
    violation("export of " + subject + " failed: " + e.what());
    return;
  }
  std::set<std::string> exported;
  for (const auto& e : doc.at("executions").as_array()) {
    exported.insert(std::string(e.at("id").as_string()));
  }
  for (const SimRun& run : runs_) {
    if (run.subject == subject && !discarded_.count(run.id) && !exported.count(run.id)) {
      violation("export of " + subject + " lacks " + run.id);
    }
  }
  for (const auto& blob : doc.at("claimChecked").as_array()) {
    if (blob.as_object().contains("missing") &&
        !fairReclaims_.count(std::string(blob.at("address").as_string()))) {
      violation("export of " + subject + ": blob " + json::toText(blob.at("address")) +
                " is missing");
    }
  }
}

}  // namespace loom::sim
