// One seed's world (sim.h): its home, clock, config, runners, the operator's app, the runs and
// what happened to them. world.cc builds it and runs the schedule; actors.cc holds the other
// actors' work (erasure, sweep, retention, signals, a second runner); invariants.cc checks the
// end state.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fault_stores.h"
#include "loom/app/app.h"
#include "loom/effects/task.h"
#include "loom/util/clock.h"
#include "loom/workflow/workflow.h"
#include "rng.h"
#include "sim.h"

namespace loom::sim {

class World;

// A runner: as far as the stores can tell, a process of its own (its own app, connections and
// lease owner). A crash kills it: every later call of its stores fails, until it is booted
// again (a new process).
class Runner : public Interposer {
 public:
  Runner(World& world, std::string name) : world_(world), name_(std::move(name)) {}
  ~Runner() override;
  app::App& app();  // boots a new process when there is none
  const std::string& name() const { return name_; }
  bool dead() const { return dead_; }
  // Kills it (the app is dropped at the next restart()).
  [[noreturn]] void crash(const std::string& where);
  // Drops a dead or live process; the next app() boots a new one. A dead one's staged writes
  // are dropped with it, a live one's committed as it closes.
  void restart();

  void beforeWrite(const WriteSite& site) override;
  void afterWrite(const WriteSite& site) override;
  void beforeRead() const override;
  void stored(const std::optional<std::string>& subject, std::string_view bytes,
              const std::string& address) override;
  void landed(const std::string& address, std::string_view bytes, bool fresh,
              bool deferred) override;
  void deleted(std::string_view address) override;

  std::string current;  // the execution it is running, for writes that name none (puts)
  kernel::LeaseOwner owner;  // its process's, set at each boot

 private:
  friend class World;  // bootApp attaches log_
  World& world_;
  std::string name_;
  bool dead_ = false;
  int64_t writes_ = 0;
  std::unique_ptr<app::App> app_;
  SimEventStore* log_ = nullptr;  // app_'s log store, while app_ lives
};

struct SimRun {
  std::string id;
  std::optional<std::string> subject;
  json::value plan;
  std::vector<std::string> signals;  // what it waits for, in order
  std::set<std::string> sent;        // signals sent so far
};

// One live event citing a blob (reclaims.cc).
struct BlobCitation {
  std::string executionId;
  int64_t seq = 0;
  bool retain = false;  // its envelope's retain: load-bearing
};

class World {
 public:
  // `schema`: the seed's PostgreSQL schema (with options.postgresUrl).
  World(const SeedOptions& options, std::filesystem::path home, std::string schema);
  ~World();
  SeedReport run();

 private:
  friend class Runner;
  // world.cc: set-up and the schedule
  void configure();
  std::unique_ptr<app::App> bootApp(Runner* runner);
  app::App& ops() { return operator_->app(); }
  app::App& reader();
  void submitRuns();
  void act();
  void drive(Runner& runner);
  // actors.cc: one pass of a worker::Executor in `runner`'s process: it claims what is
  // runnable by lease and runs each claimed run to where it stops, one after another.
  void executorPass(Runner& runner);
  void onWrite(Runner& runner, const WriteSite& site, bool after);
  void onPutLanded(Runner& runner, const std::string& address, std::string_view bytes,
                   bool deferred);
  // Deletes the packed row of `address` from loom.db (a put whose commit was lost); false when
  // there is none.
  bool dropPackedRow(const std::string& address);
  void restartDead();
  std::vector<std::string> openRuns();
  bool ended(const std::string& id);
  // actors.cc: the other actors
  void interleave(Runner& runner, const WriteSite& site, bool after);
  void erase(const std::string& subject);
  void sweep();
  void retention();
  void signal(SimRun& run, bool duplicate);
  void cancel(SimRun& run);
  void secondRunner(Runner& holder, const std::string& id, bool takeover);
  void jumpClock(int64_t ms, const char* why);
  // invariants.cc: the end
  void drain();
  void checkInvariants();
  void checkLog(const kernel::ExecutionInfo& info);
  void checkBlobs(const kernel::ExecutionInfo& info);
  void checkErased(const std::string& subject);
  void checkExport(const std::string& subject);
  void onEffect(const effects::EffectContext& call);
  // reclaims.cc: what a sweep deleted, judged against the rules (telemetry only after its
  // run's end plus the ttl, a load-bearing blob never). SweepStart: what a sweep starts from,
  // the time, the blobs stored, every live event citing one, and the runs' metadata (its
  // decisions rest on them, whatever happens during it).
  struct SweepStart {
    int64_t now = 0;
    std::set<std::string> stored;
    std::map<std::string, std::vector<BlobCitation>> citations;  // address -> live citations
    std::map<std::string, kernel::ExecutionInfo> runs;
  };
  std::set<std::string> storedBlobs();
  SweepStart sweepStart();
  void judgeReclaimed(const SweepStart& start, const std::set<std::string>& deleted);
  bool reclaimedFairly(const std::string& address, const std::string& executionId);
  // what happened
  void note(const std::string& line);
  void count(const std::string& what, int64_t n = 1) { report_.counts[what] += n; }
  void violation(const std::string& what);
  bool erased(const std::optional<std::string>& subject) const {
    return subject && erasedSubjects_.count(*subject);
  }

  SeedOptions options_;
  std::filesystem::path home_;
  std::string schema_;
  Rng rng_;
  // Kinds of draw added later (telemetry, ttl, agent ops, torn puts, approvals) come from a
  // second stream of the seed, so the draws of rng_ stay where they were.
  Rng more_;
  SeedReport report_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::shared_ptr<const app::Config> config_;
  workflow::WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  std::vector<std::unique_ptr<Runner>> runners_;
  std::vector<SimRun> runs_;
  std::vector<std::string> subjects_;
  std::set<std::string> erasedSubjects_;
  std::set<std::string> discarded_;                    // runs retention removed without an archive
  std::map<std::string, std::set<std::string>> puts_;  // subject ("" none) -> addresses put
  std::map<std::size_t, std::set<std::string>> putters_;  // bytes' hash -> subjects put them
  std::set<std::string> citedByLiving_;  // blobs the runs of subjects not erased cite
  std::optional<std::string> erasing_;   // the subject an erasure is running for
  std::unique_ptr<Runner> operator_;     // erasure, sweep, retention, signals, cancels
  std::unique_ptr<app::App> reader_;     // the checks' own app: no faults
  bool archive_ = true;
  bool packed_ = false;  // small blobs are rows of loom.db (storage.contentStore.packBelowBytes)
  int64_t telemetryTtl_ = 86'400'000;  // the sweep's ttl for telemetry (reclaimable) blobs
  // address -> the telemetry citations (execution, seq) a sweep deleted it under, each past
  // its run's end plus the ttl then: the blob may be missing for those, and only those.
  std::map<std::string, std::set<std::pair<std::string, int64_t>>> fairReclaims_;
  // The deletes of the actors running, innermost last: a sweep's own set, or null for an
  // erasure (a sweep may run inside an erasure's delete, and an erasure inside a sweep's).
  std::vector<std::set<std::string>*> deleters_;
  bool faults_ = true;  // off while the world drains
  int depth_ = 0;       // > 0 while another actor's work runs inside a write
};

}  // namespace loom::sim
