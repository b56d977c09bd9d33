// The other actors of a world: what an operator, a second runner or time does, at the top of
// the schedule or inside a runner's write (interleave).
#include "app/maintenance.h"
#include "loom/compliance/erase.h"
#include "loom/kernel/lease.h"
#include "loom/sweep/retention.h"
#include "loom/util/error.h"
#include "loom/worker/executor.h"
#include "world.h"

namespace loom::sim {
namespace {

constexpr int64_t kTakeoverMillis = 600'000 + 1'000;  // past any lease's ttl

// What an actor may meet without anything being wrong: an injected fault, or its run moved on
// by another runner meanwhile (a lease taken over, the log appended to: it stops, recording
// nothing).
bool injected(const std::exception& e) {
  return std::string_view(e.what()).find("simulated") != std::string_view::npos ||
         dynamic_cast<const ConflictError*>(&e) != nullptr;
}

// Marks an actor's deletes as its own while it runs (World::deleters_).
struct Deleting {
  std::vector<std::set<std::string>*>& stack;
  bool in = true;
  Deleting(std::vector<std::set<std::string>*>& s, std::set<std::string>* mine) : stack(s) {
    stack.push_back(mine);
  }
  void leave() {
    if (in) stack.pop_back();
    in = false;
  }
  ~Deleting() { leave(); }
};

}  // namespace

// Runs each claimed run in the runner's app, as `loom worker` does in its own process.
class RunnerLauncher : public worker::RunLauncher {
 public:
  explicit RunnerLauncher(Runner& runner) : runner_(runner) {}
  std::optional<workflow::RunResult> run(const kernel::Lease& claim,
                                         const kernel::ExecutionInfo&) override {
    runner_.current = claim.executionId;
    return runner_.app().runtime().resumeClaimed(claim);
  }

 private:
  Runner& runner_;
};

void World::executorPass(Runner& runner) {
  note(runner.name() + " runs an executor pass");
  try {
    app::App& app = runner.app();
    RunnerLauncher launcher(runner);
    worker::ExecutorOptions options;
    options.concurrency = 3;
    options.clock = clock_;
    options.owner = runner.owner;
    options.onRun = [this](const worker::RunReport& r) {
      note("  " + r.executionId + ": " + r.outcome);
      count("executorRuns");
    };
    options.onWarn = [this](std::string_view m) { note("  executor: " + std::string(m)); };
    worker::Executor executor(app.store(), launcher, options);
    executor.runPass();
  } catch (const std::exception& e) {
    note(std::string("  executor: ") + e.what());
    if (!runner.dead() && !injected(e)) violation(std::string("an executor pass failed: ") + e.what());
  }
  runner.current.clear();
}

void World::interleave(Runner& runner, const WriteSite& site, bool after) {
  std::string id = site.executionId.empty() ? runner.current : site.executionId;
  SimRun* run = nullptr;
  for (SimRun& r : runs_) run = r.id == id ? &r : run;
  ++depth_;
  struct Leave {
    int& depth;
    ~Leave() { --depth; }
  } leave{depth_};
  note(std::string(after ? "after " : "inside ") + runner.name() + "'s " + std::string(site.call) +
       (id.empty() ? "" : " of " + id) + ":");
  // Inside an erasure, runs going on meanwhile are the race that matters most (an identical
  // put by another subject): chosen half the time.
  // Just after a blob landed and before its envelope is journaled, a sweep is the race that
  // matters most (the blob is cited by nothing yet): chosen half the time too.
  uint64_t pick = erasing_ && rng_.chance(50)                      ? 7
                  : after && site.call == "put" && rng_.chance(50) ? 1
                                                                   : rng_.below(8);
  switch (pick) {
    case 7:  // another runner goes on with a run meanwhile (an identical put amid an erasure)
      for (auto& r : runners_) {
        if (r.get() != &runner && r->current.empty() && !r->dead()) {
          drive(*r);
          if (r->dead()) r->restart();
          break;
        }
      }
      break;
    case 0:
      if (!subjects_.empty()) erase(rng_.pick(subjects_));
      break;
    case 1:  // a sweep while the step is in flight, sometimes after it took longer than the grace
      count("race.sweepVsRunningRun");
      if (rng_.chance(50)) jumpClock(5'000, "the step takes longer than the sweep's grace");
      sweep();
      break;
    case 2:
      if (!id.empty()) secondRunner(runner, id, false);
      break;
    case 3:
      if (!id.empty()) secondRunner(runner, id, true);
      break;
    case 4:
      if (run) signal(*run, rng_.chance(40));
      break;
    case 5:
      if (run && rng_.chance(30)) cancel(*run);
      break;
    default:
      retention();
  }
}

void World::erase(const std::string& subject) {
  note("operator erases " + subject);
  count("erasures");
  erasedSubjects_.insert(subject);
  erasing_ = subject;
  Deleting deleting{deleters_, nullptr};  // its deletes are judged by checkErased
  try {
    app::App& app = ops();
    sweep::Archive archive = app.readableArchive();
    compliance::EraseCoordinatorOptions options = app::eraseOptions(app, archive);
    options.concurrency = 1;  // one thread: the order of its writes is the seed's
    compliance::EraseSubjectResult result = compliance::eraseSubject(options, subject);
    note("  erased " + subject + ": " + compliance::describe(result));
  } catch (const compliance::ContentCopiesRemainError& e) {
    note(std::string("  erasure refused: ") + e.what());  // fails closed; run it again later
  } catch (const std::exception& e) {
    note(std::string("  erasure failed: ") + e.what());
    if (!injected(e) && !operator_->dead()) violation("erasing " + subject + ": " + e.what());
  }
  erasing_.reset();
}

void World::sweep() {
  note("operator sweeps");
  count("sweeps");
  SweepStart start = sweepStart();
  std::set<std::string> deleted;
  Deleting deleting{deleters_, &deleted};
  try {
    app::App& app = ops();
    sweep::Archive archive = app.readableArchive();
    sweep::SweepOptions options;
    options.ttlMillis = telemetryTtl_;
    options.graceMillis = 1'000;
    options.clock = clock_;
    sweep::SweepReport report =
        sweep::sweepUnpinnedContent(*app.contentStore(), app::sweepSources(app, archive), options);
    count("sweep.deleted", report.deleted);
    note("  swept: " + sweep::describe(report));
  } catch (const std::exception& e) {
    note(std::string("  sweep failed: ") + e.what());
    if (!injected(e) && !operator_->dead()) violation(std::string("sweeping: ") + e.what());
  }
  deleting.leave();
  judgeReclaimed(start, deleted);  // whatever way it ended: what it deleted (actors during it too)
}

void World::retention() {
  note("operator runs retention");
  try {
    sweep::RetentionOptions options;
    options.afterDays = 1;
    options.archive = archive_;
    options.clock = clock_;
    sweep::RetentionReport report = ops().runRetention(options);
    count("retention.removed", report.removed);
    note("  retention removed " + std::to_string(report.removed));
  } catch (const std::exception& e) {
    note(std::string("  retention failed: ") + e.what());
    if (!injected(e) && !operator_->dead()) violation(std::string("retention: ") + e.what());
  }
  for (const SimRun& run : runs_) {
    if (!archive_ && !reader().store().info(run.id)) discarded_.insert(run.id);
  }
}

void World::signal(SimRun& run, bool duplicate) {
  std::string name;
  for (const std::string& s : run.signals) {
    if (name.empty() && !run.sent.count(s)) name = s;
  }
  if (duplicate || name.empty()) {
    if (run.sent.empty()) return;
    name = *run.sent.begin();
    count("signals.duplicate");
  }
  note("operator signals " + run.id + " " + name);
  run.sent.insert(name);
  try {
    // An agent's approval reads "approved"; the other waits take any payload.
    json::object payload{{"from", "sim"}, {"approved", more_.chance(50)}};
    workflow::RunResult r = ops().runtime().signal(run.id, name, std::move(payload));
    note("  " + run.id + ": " + std::string(kernel::statusName(r.status)));
  } catch (const NotFoundError& e) {
    note(std::string("  refused: ") + e.what());
    if (reader().store().info(run.id)) violation("signalling " + run.id + ": " + e.what());
  } catch (const FailedPreconditionError& e) {
    count("signals.late");  // it ended meanwhile; refused
    note(std::string("  refused: ") + e.what());
  } catch (const std::exception& e) {
    note(std::string("  signal failed: ") + e.what());
    if (!injected(e) && !operator_->dead() && !erased(run.subject)) {
      violation("signalling " + run.id + ": " + e.what());
    }
  }
}

void World::cancel(SimRun& run) {
  note("operator cancels " + run.id);
  count("cancels");
  try {
    ops().runtime().cancel(run.id, "the simulator cancelled it");
  } catch (const NotFoundError& e) {
    note(std::string("  refused: ") + e.what());
    if (reader().store().info(run.id)) violation("cancelling " + run.id + ": " + e.what());
  } catch (const FailedPreconditionError& e) {
    note(std::string("  refused: ") + e.what());
  } catch (const std::exception& e) {
    note(std::string("  cancel failed: ") + e.what());
    if (!injected(e) && !operator_->dead() && !erased(run.subject)) {
      violation("cancelling " + run.id + ": " + e.what());
    }
  }
}

void World::secondRunner(Runner& holder, const std::string& id, bool takeover) {
  Runner* other = nullptr;
  for (auto& r : runners_) other = r.get() != &holder ? r.get() : other;
  if (!other || other->dead() || !other->current.empty()) return;  // busy further up the stack
  std::optional<kernel::Lease> lease = reader().store().currentLease(id);
  bool holds = lease && lease->liveAt(clock_->nowMillis()) &&
               lease->owner.id.rfind(holder.name() + "#", 0) == 0;
  if (takeover) {
    jumpClock(kTakeoverMillis, "the holder's lease expires");
    count("race.takeover");
  } else {
    count("race.twoRunners");
  }
  note(other->name() + " resumes " + id + " while " + holder.name() + " runs it");
  other->current = id;
  std::optional<kernel::ExecutionInfo> before = reader().store().info(id);
  try {
    workflow::RunResult r = other->app().runtime().resume(id);
    note("  " + id + ": " + std::string(kernel::statusName(r.status)));
    std::optional<kernel::ExecutionInfo> after = reader().store().info(id);
    if (holds && !takeover && before && after && after->nextSeq != before->nextSeq) {
      violation("two runners ran " + id +
                " at once: the second appended while the first held "
                "its lease");
    }
  } catch (const kernel::LeaseHeldError&) {
    note("  refused: the lease is held");
  } catch (const std::exception& e) {
    note(std::string("  ") + e.what());
  }
  other->current.clear();
  if (other->dead()) other->restart();
}

void World::jumpClock(int64_t ms, const char* why) {
  clock_->advance(ms);
  note("clock +" + std::to_string(ms) + " ms: " + why);
}

}  // namespace loom::sim
