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

void requestStop(int) { gStopRequested.store(true); }

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

// A file for a child's output, already unlinked: read back once the child has exited.
UniqueFd scratchFile() {
  char path[] = "/tmp/loom-worker-XXXXXX";
  int fd = ::mkostemp(path, O_CLOEXEC);  // never inherited by another run's child
  if (fd < 0) throw UnavailableError("loom worker: cannot create a scratch file in /tmp");
  ::unlink(path);
  return UniqueFd(fd);
}

std::string readBack(int fd, std::size_t limit) {
  std::string text;
  ::lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; text.size() < limit && (n = ::read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, n);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

class Worker {
 public:
  Worker(kernel::EventStore& store, ChildCommand child, const WorkerArgs& args, std::ostream& out)
      : store_(store), child_(std::move(child)), args_(args), out_(out) {}

  int run() {
    say("worker: pid " + std::to_string(::getpid()) + ", up to " +
        std::to_string(args_.concurrency) + " runs at once");
    int failedPolls = 0;
    while (!gStopRequested.load()) {
      std::vector<std::string> claimed;
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
      for (auto& id : claimed) {
        if (gStopRequested.load()) break;  // stop claiming at once
        start(std::move(id));
      }
      waitFor(std::chrono::milliseconds(args_.pollMillis));
    }
    drain();
    return kExitOk;
  }

  // Only reached with runs in flight when run() threw: they must not outlive their threads.
  ~Worker() {
    signalChildren(SIGKILL);
    for (auto& t : threads_) t.thread.join();
  }

 private:
  // Runnable executions not already running here and not backing off, up to the free slots.
  std::vector<std::string> claimRunnable() {
    std::vector<std::string> out;
    std::size_t free = static_cast<std::size_t>(args_.concurrency) - active();
    if (free == 0) return out;
    int64_t now = systemClock()->nowMillis();
    kernel::ExecutionFilter filter;
    filter.status = kernel::ExecutionStatus::kRunning;
    kernel::forEachExecution(store_, filter, [&](const kernel::ExecutionInfo& info) {
      if (out.size() >= free || busy(info.id, now)) return;
      if (kernel::isOrphaned(store_.currentLease(info.id), now)) out.push_back(info.id);
    });
    filter.status = kernel::ExecutionStatus::kParked;  // durable timers that are due
    kernel::forEachExecution(store_, filter, [&](const kernel::ExecutionInfo& info) {
      if (out.size() >= free || busy(info.id, now)) return;
      std::optional<int64_t> wake;
      try {
        wake = kernel::timerWakeAt(store_, info);
      } catch (const kernel::SealedEventError&) {
        // Sealed, and this worker has no keys: it cannot tell, so it leaves the run parked
        // (and the other executions still run). `loom worker` needs the home's key to wake it.
        return;
      }
      if (wake && *wake <= now && kernel::isOrphaned(store_.currentLease(info.id), now)) {
        out.push_back(info.id);
      }
    });
    return out;
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

  void start(std::string id) {
    {
      std::lock_guard lock(mu_);
      running_.emplace(id, 0);
    }
    reapThreads();
    auto done = std::make_shared<std::atomic<bool>>(false);
    threads_.push_back({std::thread([this, done, id = std::move(id)] {
                          resume(id);
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

  // Runs `loom resume ID --json` in a child and reports how it ended, as the store tells it.
  void resume(const std::string& id) {
    std::string outcome;
    bool failed = false;
    try {
      UniqueFd err = scratchFile();
      std::vector<std::string> argv{child_.program};
      argv.insert(argv.end(), child_.globalArgs.begin(), child_.globalArgs.end());
      for (const char* a : {"resume", id.c_str(), "--json"}) argv.emplace_back(a);
      int status = spawnAndWait(id, argv, err.get());
      std::tie(outcome, failed) = outcomeOf(id, status, readBack(err.get(), 4096));
    } catch (const std::exception& e) {
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

  int spawnAndWait(const std::string& id, const std::vector<std::string>& argv, int err) {
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
    std::vector<char*> envp;
    for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
    envp.push_back(workerPid.data());
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

  void waitFor(std::chrono::milliseconds pause) {
    auto until = std::chrono::steady_clock::now() + pause;
    while (!gStopRequested.load() && std::chrono::steady_clock::now() < until) {
      if (args_.once && active() == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // Waits for the children up to the drain deadline, then stops them.
  void drain() {
    if (gStopRequested.load() && active() > 0) {
      say("worker: stopping: waiting up to " + std::to_string(args_.drainSeconds) + " s for " +
          std::to_string(active()) + " run(s)");
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

std::string thisProgram() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw UnavailableError("loom worker: cannot find its own binary (/proc/self/exe)");
  return path.string();
}

}  // namespace

void dieWithWorkerIfAsked() {
  const char* worker = std::getenv(kWorkerPidEnv);
  if (worker == nullptr) return;
  pid_t parent = static_cast<pid_t>(std::strtol(worker, nullptr, 10));
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
                  "submitted or due run starts within about half a second)")
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
    ChildCommand child{thisProgram(),
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
