// `loom worker`: a long-running process that runs what nobody runs — executions whose status
// is running but that no live lease holds (orphaned by a crash, or submitted with `loom run
// --submit`), and parked ones whose timer is due — through a worker::Executor. By default each
// run goes on a thread of this process, on the app it recorded (host::RecordedApps); with
// `--isolation process`, in a `loom resume ID` child of its own
// (worker::ChildProcessLauncher). SIGTERM or SIGINT:
// stop claiming, wait for the runs up to --drain-seconds, then stop them (their runs are
// resumable at once by the next worker).
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "util/this_program.h"
#include "command.h"
#include "loom/worker/executor.h"
#include "text.h"
#include "host/recorded_apps.h"
#include "worker/child_process_launcher.h"

namespace loom::cli {
namespace {

std::atomic<int> gStopSignal{0};  // the signal that asked for the stop
void requestStop(int sig) { gStopSignal.store(sig); }

struct WorkerArgs {
  int concurrency = 16;
  int pollMillis = 500;
  int drainSeconds = 30;
  bool once = false;
  std::string isolation = "thread";
  std::vector<std::string> limits;  // --workflow-limit NAME=N
};

// "NAME=N" options as a limit per workflow; throws UsageError naming a malformed one.
std::map<std::string, std::size_t, std::less<>> workflowLimits(
    const std::vector<std::string>& specs) {
  std::map<std::string, std::size_t, std::less<>> limits;
  for (const auto& spec : specs) {
    auto eq = spec.rfind('=');
    long n = 0;
    if (eq != std::string::npos && eq > 0) {
      char* end = nullptr;
      n = std::strtol(spec.c_str() + eq + 1, &end, 10);
      if (*end != '\0' || end == spec.c_str() + eq + 1) n = 0;
    }
    if (n < 1 || n > 100'000) {
      throw UsageError("--workflow-limit " + spec +
                       ": expected NAME=N, with N from 1 to 100000 (e.g. research=4)");
    }
    limits[spec.substr(0, eq)] = static_cast<std::size_t>(n);
  }
  return limits;
}

// Runs the executor until a stop signal, then drains; or once (--once).
int runWorker(HomeSession& session, const WorkerArgs& args) {
  kernel::EventStore& store = session.store(true);
  std::unique_ptr<worker::RunLauncher> launcher;
  if (args.isolation == "process") {
    launcher = std::make_unique<worker::ChildProcessLauncher>(
        store, thisProgram("loom worker"),
        std::vector<std::string>{"--home", session.location().home.string(), "--durability",
                                 session.options().durability});
  } else {
    launcher = std::make_unique<host::RecordedApps>(session, store);
  }
  std::mutex outMu;
  auto say = [&](const std::string& line) {
    std::lock_guard lock(outMu);
    session.out() << line << std::endl;
  };
  worker::ExecutorOptions options;
  options.concurrency = static_cast<std::size_t>(args.concurrency);
  options.pollMillis = args.pollMillis;
  options.perWorkflow = workflowLimits(args.limits);
  options.onRun = [&](const worker::RunReport& r) {
    say("worker: " + r.executionId + ": " + r.outcome +
        (r.retryInMillis > 0 && !args.once
             ? " (retried in " + std::to_string(r.retryInMillis / 1000) + " s)"
             : std::string()));
  };
  options.onWarn = [&](std::string_view m) { say("worker: " + std::string(m)); };
  worker::Executor executor(store, *launcher, options);
  say("worker: pid " + std::to_string(::getpid()) + ", up to " +
      std::to_string(args.concurrency) + " runs at once (" +
      (args.isolation == "process" ? "a child process each" : "in this process") + ")");
  if (args.once) {
    worker::IdleTally tally = executor.runUntilIdle();
    if (tally.startFailed > 0) {
      say("worker: " + std::to_string(tally.startFailed) +
          " run(s) could not start; they stay as they were (see above)");
    }
    return tally.storeFailed || tally.startFailed > 0 ? kExitFailure : kExitOk;
  }
  std::atomic<bool> done{false};
  std::thread watcher([&] {  // turns the signal into a stop (a handler may not lock)
    while (!done.load() && gStopSignal.load() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (done.load()) return;
    std::size_t n = executor.active();
    say(n > 0 ? "worker: stopping: waiting up to " + std::to_string(args.drainSeconds) +
                    " s for " + std::to_string(n) + " run(s)"
              : std::string("worker: stopping: no run in progress"));
    executor.stop(std::chrono::seconds(args.drainSeconds));
  });
  executor.run();
  done.store(true);
  watcher.join();
  say(std::string("worker: stopped (") + (gStopSignal.load() == SIGINT ? "SIGINT" : "SIGTERM") +
      "); runs it did not finish are resumable by the next worker");
  if (executor.active() > 0) {
    // A run still inside a step (its lease is released: it records nothing more) cannot be
    // joined; the process ends under it.
    std::fflush(nullptr);
    ::_exit(kExitOk);
  }
  return kExitOk;
}

std::optional<kernel::ClaimedLease> gClaimedLease;  // set once, before main's work

}  // namespace

const std::optional<kernel::ClaimedLease>& claimedLeaseFromWorker() { return gClaimedLease; }

void dieWithWorkerIfAsked() { gClaimedLease = worker::takeClaimFromWorker(); }

Action setupWorker(CLI::App& command, HomeSession& session) {
  auto args = std::make_shared<WorkerArgs>();
  command.add_option("--concurrency", args->concurrency, "Runs at once (default 16)")
      ->check(CLI::Range(1, 100'000))
      ->type_name("N");
  command
      .add_option("--isolation", args->isolation,
                  "thread (default): every run on a thread of this process, on the app it "
                  "recorded; process: every run in a `loom resume ID` child process of its own")
      ->check(CLI::IsMember({"thread", "process"}))
      ->type_name("KIND");
  command
      .add_option("--workflow-limit", args->limits,
                  "At most N runs at once of workflow (or agent) NAME; repeat for others")
      ->type_name("NAME=N");
  command
      .add_option("--poll-ms", args->pollMillis,
                  "The longest wait between looks for runnable executions, in milliseconds "
                  "(default 500). A submission or a run let go wakes the worker at once (within "
                  "5 ms from another process on SQLite; LISTEN/NOTIFY on PostgreSQL), and a due "
                  "timer at its time; the poll finds what nothing announces, such as a lease "
                  "that expired")
      ->check(CLI::Range(10, 600'000))
      ->type_name("MS");
  command
      .add_option("--drain-seconds", args->drainSeconds,
                  "On SIGTERM or SIGINT, how long to wait for running runs before stopping "
                  "them (default 30)")
      ->check(CLI::Range(0, 86'400))
      ->type_name("S");
  command.add_flag("--once", args->once,
                   "Run what is runnable now, wait for it, and exit; exit 1 when a run could "
                   "not start (for cron and scripts)");
  command.footer(
      "Runs every execution that nobody runs: orphaned ones (their process died: see `loom ls`),\n"
      "ones submitted with `loom run --submit`, and parked ones whose timer, retry or approval\n"
      "deadline is due. By default each run goes on a thread of this process, booted from what\n"
      "the run recorded: the agent app file, the --config file, or this program's workflows (one\n"
      "boot per app, shared by its runs). An app that cannot be loaded (a file gone, an\n"
      "environment variable not set) leaves the run as it was and says what is missing.\n"
      "--isolation process runs each in a `loom resume ID` child instead: for tools or code that\n"
      "must not share a process (a crash takes only its own run). Several workers on one home or\n"
      "server share the work: leases let one worker run each execution. A run that fails to\n"
      "start is retried with a growing delay (1 s to 60 s). One line per run on stdout.\n"
      "Without a worker, `loom run` runs inline as before.");
  return [&session, args] {
    struct sigaction action {};
    action.sa_handler = requestStop;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGINT, &action, nullptr);
    gStopSignal.store(0);
    return runWorker(session, *args);
  };
}

}  // namespace loom::cli
