// `loom worker`: a long-running process that runs what nobody runs — executions whose status is
// running but that no live lease holds (orphaned by a crash, or submitted with `loom run
// --submit`). Each one is run by a `loom resume ID` child process of this program, so every
// run boots exactly as a resume by hand would (its recorded config, agent app and keys, from
// this environment) and a run that crashes takes no other run with it. Leases make several
// workers on one home safe: a child that loses the race is refused before it runs anything.
// SIGTERM or SIGINT: stop claiming, wait for the children up to --drain-seconds, then stop
// them (their runs are orphaned again: resumable at once on this host).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "child_process.h"
#include "command.h"
#include "loom/kernel/event_store.h"
#include "loom/util/clock.h"
#include "text.h"
#include "util/unique_fd.h"

extern char** environ;

namespace loom::cli {
namespace {

std::atomic<bool> gStopRequested{false};

// Set in a run's child: the worker's pid, so the child dies with the worker.
constexpr const char* kWorkerPidEnv = "LOOM_WORKER_PID";
// "<token>:<execution id>": the lease the worker claimed for the `loom resume` it starts.
constexpr const char* kClaimedLeaseEnv = "LOOM_CLAIMED_LEASE";
// How long a worker's claim holds if the worker dies before its child takes the run over.
constexpr int64_t kClaimTtlMillis = 15'000;

std::optional<kernel::ClaimedLease> gClaimedLease;  // set once, before main's work

std::atomic<int> gStopSignal{0};  // the signal that asked for the stop
void requestStop(int sig) {
  gStopSignal.store(sig);
  gStopRequested.store(true);
}

struct WorkerArgs {
  int concurrency = 2;
  int pollMillis = 500;
  int drainSeconds = 30;
  bool once = false;
};

// What the worker passes on to each `loom resume` child: the home and the durability.
struct ChildCommand {
  std::string program;  // this binary
  std::vector<std::string> globalArgs;
};

class Worker {
 public:
  Worker(kernel::EventStore& store, ChildCommand child, const WorkerArgs& args, std::ostream& out)
      : store_(store),
        child_(std::move(child)),
        args_(args),
        out_(out),
        owner_(kernel::processLeaseOwner()) {}

  int run() {
    say("worker: pid " + std::to_string(::getpid()) + ", up to " +
        std::to_string(args_.concurrency) + " runs at once");
    int failedPolls = 0;
    while (!gStopRequested.load()) {
      std::vector<kernel::Lease> claimed;
      try {
        claimed = claimRunnable();
        failedPolls = 0;
      } catch (const std::exception& e) {
        // The store is busy or unreadable now: say so, keep the runs going, look again later.
        ++failedPolls;
        if (args_.once) {  // a one-shot run reports it and fails, after the runs in flight
          say(std::string("worker: cannot list the runnable executions: ") + e.what());
          drain();
          return kExitFailure;
        }
        say(std::string("worker: cannot list the runnable executions (retried in ") +
            std::to_string(std::min(failedPolls, 30)) + " s): " + e.what());
        waitFor(std::chrono::seconds(std::min(failedPolls, 30)));
        continue;
      }
      if (args_.once && claimed.empty() && active() == 0) break;
      for (auto& lease : claimed) {
        if (gStopRequested.load()) {  // stop claiming at once: let the others go
          releaseClaim(lease);
          continue;
        }
        start(std::move(lease));
      }
      waitFor(std::chrono::milliseconds(args_.pollMillis));
    }
    drain();
    if (gStopRequested.load()) {
      say(std::string("worker: stopped (") + (gStopSignal.load() == SIGINT ? "SIGINT" : "SIGTERM") +
          "); runs it did not finish are resumable by the next worker");
    }
    return kExitOk;
  }

  // Only reached with runs in flight when run() threw: they must not outlive their threads.
  ~Worker() {
    signalChildren(SIGKILL);
    for (auto& t : threads_) t.thread.join();
  }

 private:
  // Runnable executions not already running here and not backing off, up to the free slots.
  // Claims what is runnable now by taking its lease (kernel::EventStore::claimRunnable), so
  // no other worker starts a child for it: runs nobody holds by the store's clock, runs
  // whose owner died on this host (their lease broken), parked runs whose timer is due.
  std::vector<kernel::Lease> claimRunnable() {
    std::size_t free = static_cast<std::size_t>(args_.concurrency) - active();
    if (free == 0) return {};
    int64_t now = systemClock()->nowMillis();
    std::vector<kernel::Lease> out =
        store_.claimRunnable({owner_, kClaimTtlMillis, free, busyIds(now)});
    kernel::ExecutionFilter filter;
    filter.status = kernel::ExecutionStatus::kRunning;
    kernel::forEachExecution(store_, filter, [&](const kernel::ExecutionInfo& info) {
      if (out.size() >= free || busy(info.id, now) || claimedHere(out, info.id)) return;
      auto lease = store_.currentLease(info.id);
      if (lease && lease->liveAt(now) && kernel::ownerIsDeadHere(lease->owner)) {
        claim(info.id, lease->token, out);
      }
    });
    filter.status = kernel::ExecutionStatus::kParked;  // durable timers that are due
    kernel::forEachExecution(store_, filter, [&](const kernel::ExecutionInfo& info) {
      if (out.size() >= free || busy(info.id, now)) return;
      std::optional<int64_t> wake;
      try {
        wake = kernel::timerWakeAt(store_, info);
      } catch (const kernel::SealedEventError&) {
        return;
      }
      if (wake && *wake <= now && kernel::isOrphaned(store_.currentLease(info.id), now)) {
        claim(info.id, std::nullopt, out);
      }
    });
    return out;
  }

  static bool claimedHere(const std::vector<kernel::Lease>& claims, const std::string& id) {
    for (const auto& c : claims) {
      if (c.executionId == id) return true;
    }
    return false;
  }

  // Takes `id`'s lease for this worker (breaking `breakToken`); another claimer won: skipped.
  void claim(const std::string& id, std::optional<int64_t> breakToken,
             std::vector<kernel::Lease>& out) {
    try {
      out.push_back(store_.acquireLease({id, owner_, kClaimTtlMillis, breakToken}));
    } catch (const kernel::LeaseHeldError&) {
    }
  }

  // The claim goes: a child that took the run over holds a newer lease (nothing happens).
  void releaseClaim(const kernel::Lease& claim) {
    try {
      store_.releaseLease(claim);
    } catch (const std::exception& e) {
      say("worker: could not release its claim of " + claim.executionId + " (it expires in " +
          std::to_string(kClaimTtlMillis / 1000) + " s): " + e.what());
    }
  }

  std::vector<std::string> busyIds(int64_t now) {
    std::lock_guard lock(mu_);
    std::vector<std::string> ids;
    for (const auto& [id, pid] : running_) ids.push_back(id);
    for (const auto& [id, b] : backoff_) {
      if (b.untilMillis > now) ids.push_back(id);
    }
    return ids;
  }

  bool busy(const std::string& id, int64_t now) {
    std::lock_guard lock(mu_);
    if (running_.contains(id)) return true;
    auto it = backoff_.find(id);
    return it != backoff_.end() && it->second.untilMillis > now;
  }

  std::size_t active() {
    std::lock_guard lock(mu_);
    return running_.size();
  }

  void start(kernel::Lease claim) {
    {
      std::lock_guard lock(mu_);
      running_.emplace(claim.executionId, 0);
    }
    reapThreads();
    auto done = std::make_shared<std::atomic<bool>>(false);
    threads_.push_back({std::thread([this, done, claim = std::move(claim)] {
                          resume(claim);
                          done->store(true);
                        }),
                        done});
  }

  // Joins the threads whose run has been reported, so a long-lived worker keeps none.
  void reapThreads() {
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Runs `loom resume ID` in a child and reports how it ended, as the store tells it; the
  // child's stderr says why it did not finish (its stdout is not read: no --json, which would
  // move its error there).
  void resume(const kernel::Lease& claim) {
    const std::string& id = claim.executionId;
    std::string outcome;
    bool failed = false;
    // The claim fences every other runner out: a run not ended now ends, if it ends, by
    // this worker's child. One that ended between the listing and the claim was reported by
    // whoever ended it, so this worker says nothing of it.
    if (endedBeforeTheClaim(claim)) return;
    try {
      UniqueFd err = scratchFile("loom worker");
      std::vector<std::string> argv{child_.program};
      argv.insert(argv.end(), child_.globalArgs.begin(), child_.globalArgs.end());
      for (const char* a : {"resume", id.c_str()}) argv.emplace_back(a);
      int status = spawnAndWait(claim, argv, err.get());
      releaseClaim(claim);  // before the outcome: a claim still held is not "another runner"
      std::tie(outcome, failed) = outcomeOf(id, status, readBack(err.get(), 4096));
    } catch (const std::exception& e) {
      releaseClaim(claim);
      outcome = std::string("could not run `loom resume`: ") + e.what();
      failed = true;
    }
    std::lock_guard lock(mu_);
    running_.erase(id);
    if (failed) {
      Backoff& b = backoff_[id];
      b.delayMillis = b.delayMillis == 0 ? 1000 : std::min<int64_t>(b.delayMillis * 2, 60'000);
      b.untilMillis = systemClock()->nowMillis() + b.delayMillis;
      outcome += " (retried in " + std::to_string(b.delayMillis / 1000) + " s)";
    } else {
      backoff_.erase(id);
    }
    sayLocked("worker: " + id + ": " + outcome);
  }

  bool endedBeforeTheClaim(const kernel::Lease& claim) {
    std::optional<kernel::ExecutionInfo> info;
    try {
      info = store_.info(claim.executionId);
    } catch (const Error&) {
      return false;  // the child meets the same error and says it
    }
    if (!info || !kernel::isEnded(info->status)) return false;
    releaseClaim(claim);
    std::lock_guard lock(mu_);
    running_.erase(claim.executionId);
    return true;
  }

  // What the child's run came to: the execution's status now, or why it is still runnable.
  // Returns {text, failed}; failed means "try again later".
  std::pair<std::string, bool> outcomeOf(const std::string& id, int status,
                                         const std::string& err) {
    auto info = store_.info(id);
    if (!info) return {"gone (removed while it ran)", false};
    if (info->status != kernel::ExecutionStatus::kRunning) {
      std::string text(kernel::statusName(info->status));
      if (info->status == kernel::ExecutionStatus::kParked) {
        try {
          if (auto park = kernel::currentPark(store_, *info); park && park->wakeAtMillis) {
            text += " (" + park->reason + " until " + formatTimestamp(*park->wakeAtMillis) + ")";
          }
        } catch (const kernel::SealedEventError&) {
          // Sealed, and this worker holds no key: the status alone says it parked.
        }
      }
      return {text, false};
    }
    int64_t now = systemClock()->nowMillis();
    auto lease = store_.currentLease(id);
    if (!kernel::isOrphaned(lease, now)) {
      return {"taken by another runner: " + kernel::describeHolder(*lease, now), false};
    }
    if (WIFSIGNALED(status)) {
      return {"stopped by signal " + std::to_string(WTERMSIG(status)) + " (resumable)",
              !gStopRequested.load()};
    }
    return {"did not finish: " + (err.empty() ? std::string("no message") : err), true};
  }

  int spawnAndWait(const kernel::Lease& claim, const std::vector<std::string>& argv, int err) {
    const std::string& id = claim.executionId;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, err, 2);
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    // A process group of its own: a Ctrl-C at the terminal reaches the worker, which drains,
    // not every run at once.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    // The environment as it is, plus the worker's pid: the child dies with the worker, so a
    // worker's runs are orphaned with it and another worker takes them over.
    std::string workerPid = std::string(kWorkerPidEnv) + "=" + std::to_string(::getpid());
    std::string claimed =
        std::string(kClaimedLeaseEnv) + "=" + std::to_string(claim.token) + ":" + id;
    std::vector<char*> envp;
    for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
    envp.push_back(workerPid.data());
    envp.push_back(claimed.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attr, cargv.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw UnavailableError(argv[0] + ": " + std::strerror(rc));
    {
      std::lock_guard lock(mu_);
      running_[id] = pid;
      if (killing_ != 0) ::kill(-pid, killing_);  // spawned after drain signalled the others
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

  // Waits up to `pause` (the poll), returning early when the store hears of work (a
  // submission or a released lease anywhere: EventStore::awaitWork), when a child ends, or on
  // SIGTERM; each wait is a short slice so a stop request is seen at once.
  void waitFor(std::chrono::milliseconds pause) {
    auto until = std::chrono::steady_clock::now() + pause;
    std::size_t running = active();
    while (!gStopRequested.load() && std::chrono::steady_clock::now() < until) {
      if (args_.once && active() == 0) return;
      if (active() < running) return;  // a slot came free
      try {
        if (store_.awaitWork(20)) return;
      } catch (const std::exception&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }

  // Waits for the children up to the drain deadline, then stops them.
  void drain() {
    if (gStopRequested.load()) {
      say(active() > 0 ? "worker: stopping: waiting up to " + std::to_string(args_.drainSeconds) +
                             " s for " + std::to_string(active()) + " run(s)"
                       : std::string("worker: stopping: no run in progress"));
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(args_.drainSeconds);
    while (active() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    signalChildren(SIGTERM);
    auto hard = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (active() > 0 && std::chrono::steady_clock::now() < hard) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    signalChildren(SIGKILL);
    for (auto& t : threads_) t.thread.join();
    threads_.clear();
  }

  // Signals every child's process group (a child leads its own), and any spawned later.
  void signalChildren(int sig) {
    std::lock_guard lock(mu_);
    killing_ = sig;
    for (const auto& [id, pid] : running_) {
      if (pid > 0) ::kill(-pid, sig);
    }
  }

  void say(const std::string& line) {
    std::lock_guard lock(mu_);
    sayLocked(line);
  }
  void sayLocked(const std::string& line) { out_ << line << std::endl; }

  struct Backoff {
    int64_t delayMillis = 0;
    int64_t untilMillis = 0;
  };

  kernel::EventStore& store_;
  const ChildCommand child_;
  const WorkerArgs args_;
  std::ostream& out_;
  const kernel::LeaseOwner owner_;  // who holds this worker's claims
  std::mutex mu_;
  std::map<std::string, pid_t> running_;    // GUARDED_BY(mu_); 0 until spawned
  std::map<std::string, Backoff> backoff_;  // GUARDED_BY(mu_)
  int killing_ = 0;                         // GUARDED_BY(mu_): the signal drain sent
  struct RunThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;  // set once its run is reported
  };
  std::list<RunThread> threads_;  // used by the worker's main thread only
};

}  // namespace

const std::optional<kernel::ClaimedLease>& claimedLeaseFromWorker() { return gClaimedLease; }

void dieWithWorkerIfAsked() {
  const char* worker = std::getenv(kWorkerPidEnv);
  if (worker == nullptr) return;
  pid_t parent = static_cast<pid_t>(std::strtol(worker, nullptr, 10));
  if (const char* claimed = std::getenv(kClaimedLeaseEnv)) {
    std::string text(claimed);
    auto colon = text.find(':');
    if (colon != std::string::npos) {
      gClaimedLease = kernel::ClaimedLease{text.substr(colon + 1),
                                           std::strtoll(text.c_str(), nullptr, 10), parent};
    }
  }
  ::unsetenv(kClaimedLeaseEnv);
  ::unsetenv(kWorkerPidEnv);  // not for the tools this run starts
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kExitFailure);  // the worker died before this line
}

Action setupWorker(CLI::App& command, Session& session) {
  auto args = std::make_shared<WorkerArgs>();
  command.add_option("--concurrency", args->concurrency, "Runs at once (default 2)")
      ->check(CLI::Range(1, 256))
      ->type_name("N");
  command
      .add_option("--poll-ms", args->pollMillis,
                  "How often to look for runnable executions, in milliseconds (default 500: a "
                  "submitted or due run starts within about half a second; on PostgreSQL a "
                  "submission or a released run wakes the worker at once)")
      ->check(CLI::Range(10, 600'000))
      ->type_name("MS");
  command
      .add_option("--drain-seconds", args->drainSeconds,
                  "On SIGTERM or SIGINT, how long to wait for running runs before stopping "
                  "them (default 30)")
      ->check(CLI::Range(0, 86'400))
      ->type_name("S");
  command.add_flag("--once", args->once,
                   "Run what is runnable now, wait for it, and exit (for cron and scripts)");
  command.footer(
      "Runs every execution that nobody runs: orphaned ones (their process died: see `loom ls`)\n"
      "and ones submitted with `loom run --submit`. Each is run by a `loom resume ID` child\n"
      "process, with this process's environment (LOOM_MASTER_KEY included), so it boots as a\n"
      "resume by hand would. Several workers on one home share the work: leases let one child\n"
      "run each execution and refuse the others before they run anything. A run that fails to\n"
      "start is retried with a growing delay (1 s to 60 s). One line per run on stdout.\n"
      "Without a worker, `loom run` runs inline as before.");
  return [&session, args] {
    kernel::EventStore& store = session.store(true);
    ChildCommand child{thisProgram("loom worker"),
                       {"--home", session.location().home.string(), "--durability",
                        session.options().durability}};
    struct sigaction action {};
    action.sa_handler = requestStop;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGINT, &action, nullptr);
    gStopRequested.store(false);
    return Worker(store, std::move(child), *args, session.out()).run();
  };
}

}  // namespace loom::cli
