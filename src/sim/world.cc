#include "world.h"

#include <cstdlib>

#include "loom/content/sqlite_content_store.h"
#include "loom/kernel/lease.h"
#include "loom/util/error.h"
#include "util/io_error.h"
#include "workload.h"

namespace loom::sim {
namespace {

// Long enough that no lease is renewed by the keeper's (real-time) beat while a seed runs, so
// only the manual clock decides when a lease expires.
constexpr int64_t kLeaseTtlMillis = 600'000;
constexpr char kMasterKeyVariable[] = "LOOM_SIM_MASTER_KEY";
constexpr char kMasterKey[] = "5e1f0c0ffee5e1f0c0ffee5e1f0c0ffee5e1f0c0ffee5e1f0c0ffee5e1f0c0ff";

kernel::LeaseOwner ownerNamed(const std::string& name) {
  kernel::LeaseOwner owner;
  owner.id = name;
  owner.host = "sim";  // no pid: a dead runner's lease is taken over only once it expired
  return owner;
}

}  // namespace

Runner::~Runner() {
  dead_ = true;  // what its app still tries on the way down reaches nothing
  app_.reset();
}

app::App& Runner::app() {
  if (dead_) restart();
  if (!app_) {
    app_ = world_.bootApp(this);
    world_.count("boots");
  }
  return *app_;
}

void Runner::crash(const std::string& where) {
  dead_ = true;
  world_.count("crashes");
  world_.note(name_ + " crashes " + where);
  throw UnavailableError("simulated crash: " + name_ + " died " + where);
}

void Runner::restart() {
  if (dead_ && log_) log_->dropStagedWrites();  // as a SIGKILL drops them
  log_ = nullptr;
  dead_ = true;
  app_.reset();
  dead_ = false;
  current.clear();
}

void Runner::beforeWrite(const WriteSite& site) {
  if (dead_) throw UnavailableError("simulated crash: " + name_ + " is dead");
  ++writes_;
  if (app_) world_.onWrite(*this, site, false);
}

void Runner::afterWrite(const WriteSite& site) {
  if (dead_) throw UnavailableError("simulated crash: " + name_ + " is dead");
  if (app_) world_.onWrite(*this, site, true);
}

void Runner::beforeRead() const {
  if (dead_) throw UnavailableError("simulated crash: " + name_ + " is dead");
}

void Runner::landed(const std::string& address, std::string_view bytes, bool fresh, bool deferred) {
  if (app_ && fresh) world_.onPutLanded(*this, address, bytes, deferred);
}

void Runner::deleted(std::string_view address) {
  if (!world_.deleters_.empty() && world_.deleters_.back()) {
    world_.deleters_.back()->insert(std::string(address));
  }
}

void Runner::stored(const std::optional<std::string>& subject, std::string_view bytes,
                    const std::string& address) {
  world_.puts_[subject.value_or("")].insert(address);
  world_.putters_[std::hash<std::string_view>{}(bytes)].insert(subject.value_or(""));
  if (world_.erasing_ && subject != world_.erasing_ &&
      world_.putters_[std::hash<std::string_view>{}(bytes)].count(*world_.erasing_)) {
    world_.count("race.eraseVsIdenticalPut");
    world_.note(name_ + " puts bytes " + *world_.erasing_ + " put too, during their erasure");
  }
}

World::World(const SeedOptions& options, std::filesystem::path home, std::string schema)
    : options_(options),
      home_(std::move(home)),
      schema_(std::move(schema)),
      rng_(options.seed),
      more_(options.seed ^ 0x5eed'0f'7e1e'3e7bULL) {
  report_.seed = options.seed;
  registerWorkload(workflows_, tasks_, [this](const effects::EffectContext& c) { onEffect(c); });
  configure();
  runners_.push_back(std::make_unique<Runner>(*this, "runner-a"));
  runners_.push_back(std::make_unique<Runner>(*this, "runner-b"));
  operator_ = std::make_unique<Runner>(*this, "operator");
}

World::~World() {
  runners_.clear();
  operator_.reset();
  reader_.reset();
}

void World::configure() {
  ::setenv(kMasterKeyVariable, kMasterKey, 1);
  app::Config c;
  c.storage.home = home_.string();
  if (!options_.postgresUrl.empty()) {
    c.storage.url = options_.postgresUrl;
    c.storage.schema = schema_;
  }
  c.execution.leaseTtlMillis = kLeaseTtlMillis;
  c.execution.snapshotEveryEvents = rng_.pick<int64_t>({0, 4, 1000});
  c.execution.retry.policy.maxAttempts = 30;
  c.execution.retry.policy.initialIntervalMillis = rng_.pick<int64_t>({100, 2000});
  c.execution.retry.policy.maxIntervalMillis = 10'000;
  c.execution.retry.policy.jitter = 0.0;  // the schedule alone decides
  c.execution.retry.waitInlineUpToMillis = rng_.pick<int64_t>({0, 500});
  bool sealed = rng_.chance(80);
  if (sealed) {
    c.security.keys = compliance::KeysConfig{std::nullopt, kMasterKeyVariable};
    c.compliance.erase = true;
    // Sealed blobs stay off: their addresses hash random ciphertext, so the order of the
    // writes that touch them (an erasure's deletes, a sweep's walk) would change from one run
    // of a seed to the next. The draw stays, so the seeds keep their schedules.
    (void)rng_.chance(30);
    subjects_ = {"alice", "bob", "carol"};
  }
  if (rng_.chance(75)) {
    middleware::ClaimCheckConfig claimCheck;
    claimCheck.toolIds = std::vector<std::string>{std::string(kFetchTool), std::string(kPageTool)};
    claimCheck.inlineCapBytes = 512;
    // Telemetry: the fetches' envelopes carry no retain, so a sweep reclaims their blobs once
    // their run ended and the ttl passed.
    if (more_.chance(40))
      claimCheck.reclaimable = {std::string(kFetchTool), std::string(kPageTool)};
    c.execution.claimCheck = std::move(claimCheck);
  }
  telemetryTtl_ = more_.pick<int64_t>({5'000, 600'000, 86'400'000});
  // Small blobs packed in loom.db (the default) or every blob a file, from a third stream of
  // the seed so the draws above stay where they were.
  packed_ = options_.postgresUrl.empty() && Rng(options_.seed ^ 0x9ac6'ed'b10b'5ULL).chance(50);
  if (!packed_ && options_.postgresUrl.empty()) c.storage.contentStore.packBelowBytes = 0;
  archive_ = rng_.chance(50);
  c.storage.retention = app::RetentionConfig{.afterDays = 1, .archive = archive_};
  c.observability.onWarn = [](std::string_view) {};  // warnings are expected under faults
  note(std::string("config: ") + (sealed ? "sealed subjects" : "no subjects") +
       (c.execution.claimCheck
            ? (c.execution.claimCheck->reclaimable.empty() ? ", claim-check"
                                                           : ", claim-check (telemetry)")
            : ", no claim-check") +
       ", telemetry ttl " + std::to_string(telemetryTtl_) + " ms" + ", snapshots every " +
       std::to_string(c.execution.snapshotEveryEvents) +
       (archive_ ? ", retention archives" : ", retention discards") +
       (packed_ ? ", small blobs packed" : ", blobs as files"));
  config_ = app::defineConfig(std::move(c));
}

std::unique_ptr<app::App> World::bootApp(Runner* runner) {
  app::BootOptions boot;
  boot.clock = clock_;
  boot.clockOnPostgres = true;  // one time for every store, as on the embedded default
  boot.workers = 1;
  if (runner) {
    // A new process each boot: a new lease owner.
    boot.leaseOwner = ownerNamed(runner->name() + "#" + std::to_string(report_.counts["boots"]));
    runner->owner = boot.leaseOwner;
    boot.wrapEventStore = [runner](std::unique_ptr<kernel::EventStore> inner) {
      auto log = std::make_unique<SimEventStore>(std::move(inner), *runner);
      runner->log_ = log.get();
      return log;
    };
    boot.wrapContentStore = [runner](std::shared_ptr<content::ContentStore> inner) {
      return std::make_shared<SimContentStore>(std::move(inner), *runner);
    };
  } else {
    boot.leaseOwner = ownerNamed("reader");
  }
  return app::boot(config_, workflows_, tasks_, boot);
}

app::App& World::reader() {
  if (!reader_) reader_ = bootApp(nullptr);
  return *reader_;
}

SeedReport World::run() {
  try {
    submitRuns();
    int64_t actions = rng_.between(20, 60);
    for (int64_t i = 0; i < actions; ++i) act();
    drain();
    checkInvariants();
  } catch (const std::exception& e) {
    violation(std::string("the simulation stopped: ") + e.what());
  }
  report_.counts["runs"] = static_cast<int64_t>(runs_.size());
  return std::move(report_);
}

void World::submitRuns() {
  int64_t n = rng_.between(2, 5);
  for (int64_t i = 0; i < n; ++i) {
    SimRun run;
    run.id = "run" + std::to_string(i + 1);
    if (!subjects_.empty() && rng_.chance(80)) run.subject = rng_.pick(subjects_);
    run.plan = drawPlan(rng_);
    if (more_.chance(35)) addAgentOp(run.plan, more_);
    run.signals = signalsOf(run.plan);
    reader().runtime().submit(kWorkflow, run.plan, {.id = run.id, .subject = run.subject});
    note("submit " + run.id + (run.subject ? " of " + *run.subject : "") + ": " +
         json::toText(run.plan));
    runs_.push_back(std::move(run));
  }
}

bool World::ended(const std::string& id) {
  std::optional<kernel::ExecutionInfo> info = reader().store().info(id);
  return !info || kernel::isEnded(info->status);
}

std::vector<std::string> World::openRuns() {
  std::vector<std::string> open;
  for (const SimRun& run : runs_) {
    if (!ended(run.id)) open.push_back(run.id);
  }
  return open;
}

void World::act() {
  std::vector<std::string> open = openRuns();
  SimRun* run = nullptr;
  if (!open.empty()) {
    std::string id = rng_.pick(open);
    for (SimRun& r : runs_) run = r.id == id ? &r : run;
  }
  uint64_t roll = rng_.below(100);
  try {
    if (roll < 45) {
      drive(*runners_[rng_.below(runners_.size())]);
    } else if (roll < 57) {
      if (run) signal(*run, rng_.chance(20));
    } else if (roll < 59) {
      if (run) cancel(*run);
    } else if (roll < 71) {
      jumpClock(rng_.pick<int64_t>({200, 3000, 60'000, kLeaseTtlMillis + 1000, 2 * 86'400'000}),
                "time passes");
    } else if (roll < 79) {
      sweep();
    } else if (roll < 84) {
      if (!subjects_.empty()) erase(rng_.pick(subjects_));
    } else if (roll < 87) {
      retention();
    } else if (roll < 91) {
      Runner& r = *runners_[rng_.below(runners_.size())];
      note(r.name() + " is killed between calls");
      count("kills");
      r.restart();  // its lease stays until it expires, as after SIGKILL
    } else {
      drive(*runners_[rng_.below(runners_.size())]);
    }
  } catch (const std::exception& e) {
    violation(std::string("an actor's call failed unexpectedly: ") + e.what());
  }
  restartDead();
}

void World::restartDead() {
  for (auto& r : runners_) {
    if (r->dead()) r->restart();
  }
  if (operator_->dead()) operator_->restart();
}

void World::drive(Runner& runner) {
  std::vector<std::string> open = openRuns();
  if (open.empty()) return;
  if (rng_.chance(25)) {  // a worker's executor claims the runs instead of a resume by id
    executorPass(runner);
    return;
  }
  std::string id = rng_.pick(open);
  bool now = rng_.chance(30);
  note(runner.name() + (now ? " retries " : " resumes ") + id);
  try {
    app::App& app = runner.app();
    runner.current = id;
    std::optional<kernel::ExecutionInfo> info = reader().store().info(id);
    std::optional<kernel::ParkState> park =
        info ? kernel::currentPark(reader().store(), *info) : std::nullopt;
    workflow::RunResult r =
        now && park && park->awaitsRetry() ? app.runtime().retry(id) : app.runtime().resume(id);
    note("  " + id + ": " + std::string(kernel::statusName(r.status)) +
         (r.parkReason.empty() ? "" : " (" + r.parkReason + ")"));
  } catch (const kernel::LeaseHeldError&) {
    count("leaseHeld");
    note("  " + id + ": held by another runner");
  } catch (const std::exception& e) {
    std::string what = e.what();
    note("  " + id + ": " + what);
    bool expected = runner.dead() || what.find("simulated") != std::string::npos ||
                    dynamic_cast<const ConflictError*>(&e) != nullptr;  // moved on elsewhere
    for (const SimRun& run : runs_) expected = expected || (run.id == id && erased(run.subject));
    if (!expected) violation("resuming " + id + " failed: " + what);
  }
  runner.current.clear();
}

void World::onWrite(Runner& runner, const WriteSite& site, bool after) {
  if (!faults_ || depth_ > 0) return;
  std::string where = std::string(after ? "after " : "before ") + std::string(site.call) +
                      (site.executionId.empty() ? "" : " of " + site.executionId);
  if (after) {  // the write landed: others may act before its caller goes on
    if (rng_.chance(8)) interleave(runner, site, true);
    if (rng_.chance(3)) runner.crash(where);
    return;
  }
  if (rng_.chance(12)) interleave(runner, site, false);
  uint64_t roll = rng_.below(100);
  if (roll < 3) runner.crash(where);
  if (roll < 5) {
    count("faults.disk");
    int err = rng_.chance(50) ? ENOSPC : EIO;
    note(runner.name() + ": disk fault " + (err == ENOSPC ? "ENOSPC " : "EIO ") + where);
    throwIoError(err, "simulated disk fault: " + runner.name() + " " + where);
  }
}

// A process dying inside a put of a new blob, on a disk that acknowledged more than it kept:
// the blob's file holds a prefix of its bytes (torn) or is gone (lost), or its packed row is gone
// (lost; a row commits whole or not at all), or a deferred put's staged row dies uncommitted
// with the process. The put never returns, so nothing cites it yet; a later put of these bytes
// must repair it, a read must refuse it.
void World::onPutLanded(Runner& runner, const std::string& address, std::string_view bytes,
                        bool deferred) {
  if (!faults_ || depth_ > 0 || !more_.chance(4)) return;
  std::filesystem::path root = home_ / "blobs";
  for (std::filesystem::path file :
       {root / address.substr(0, 2) / address,
        root / address.substr(0, 2) / address.substr(2, 2) / address}) {
    if (!std::filesystem::exists(file)) continue;
    if (more_.chance(50)) {
      auto touched = std::filesystem::last_write_time(file);  // the touch clock's time
      std::filesystem::resize_file(file, bytes.size() / 2);
      std::filesystem::last_write_time(file, touched);
      count("faults.tornPut");
      runner.crash("inside put of " + address + ", its file torn to " +
                   std::to_string(bytes.size() / 2) + " bytes");
    }
    std::filesystem::remove(file);
    count("faults.lostPut");
    runner.crash("inside put of " + address + ", its file lost");
  }
  // A packed blob's row commits whole or not at all: only lost, never torn.
  if (packed_ && dropPackedRow(address)) {
    count("faults.lostPut");
    runner.crash("inside put of " + address + ", its packed row lost");
  }
  if (packed_ && deferred) {  // staged on this runner's log: it dies uncommitted
    count("faults.lostStagedPut");
    runner.crash("inside deferred put of " + address + ", its staged row dropped");
  }
}

bool World::dropPackedRow(const std::string& address) {
  content::SqliteContentStore pack((home_ / "loom.db").string(), systemClock());
  return pack.remove(address);
}

void World::note(const std::string& line) {
  if (options_.trace) report_.trace.push_back(line);
}

void World::violation(const std::string& what) {
  report_.violations.push_back(what);
  note("VIOLATION: " + what);
}

}  // namespace loom::sim
