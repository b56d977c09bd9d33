// How soon `loom worker` picks up a run recorded with `loom run --submit` (docs/benchmarks.md,
// "Workers"): the real binary on a real home. Each iteration submits a one-step
// example.steps run and waits for it to complete; the time is the run's own record, from its
// EXECUTION_STARTED (written by --submit) to its STEP_COMPLETED (written by the worker's child
// after it claimed the run, booted and ran the step), so process start-up of the submitting
// `loom` is not counted. Arg: the worker's --poll-ms (500 is
// its default). Submitting right after the previous run completed lands just after a poll: the
// figure is close to the worst case, not the average.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <optional>
#include <thread>

#include "loom/kernel/sqlite_event_store.h"
#include "support/loom_process.h"

namespace {

using namespace loom;
using loom::testing::Child;
using loom::testing::runLoom;
using loom::testing::TempDir;

// A home with one finished run (so loom.db exists), its event store, and a worker on it
// polling every `pollMillis`; the worker is stopped on destruction.
struct WorkedHome {
  explicit WorkedHome(int64_t pollMillis) {
    ::setenv("LOOM_TEST_BIN_DIR", LOOM_BINARY_DIR, 0);
    runLoom({"--home", home, "run", "example.steps", "--input", "{\"steps\":1}"}, dir);
    store.emplace(kernel::SqliteEventStoreOptions{home + "/loom.db", kernel::Durability::kNormal});
    worker.emplace(
        std::vector<std::string>{"--home", home, "worker", "--poll-ms", std::to_string(pollMillis)},
        dir);
  }
  ~WorkedHome() {
    worker->kill(SIGTERM);
    worker->wait();
  }
  // Waits up to 30 s for execution `id` to end; false if it did not.
  bool waitForEnd(const std::string& id) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      auto info = store->info(id);
      if (info && kernel::isEnded(info->status)) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  TempDir dir;
  std::string home = (dir.path() / "home").string();
  std::optional<kernel::SqliteEventStore> store;
  std::optional<Child> worker;
};

void BM_WorkerPickup(benchmark::State& state) {
  WorkedHome h(state.range(0));
  int64_t n = 0;
  for (auto _ : state) {
    std::string id = "p" + std::to_string(n++);
    runLoom({"--home", h.home, "run", "example.steps", "--submit", "--id", id, "--input",
             "{\"steps\":1}"},
            h.dir);
    if (!h.waitForEnd(id)) {
      state.SkipWithError("the worker did not run a submitted run within 30 s");
      return;
    }
    auto events = h.store->read(id);
    int64_t started = events.front().atMillis;
    int64_t stepped = events.at(1).atMillis;  // the step, recorded by the worker's child
    state.SetIterationTime(static_cast<double>(stepped - started) / 1000.0);
  }
}
BENCHMARK(BM_WorkerPickup)
    ->Arg(100)
    ->Arg(500)
    ->Arg(1000)
    ->ArgName("pollMs")
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

// How late a worker wakes a durable timer: each iteration `loom run example.timer` parks a run
// on a 300 ms timer (inline, then the process exits); the time is the run's own record, from
// the timer's wakeAt to the STEP_COMPLETED of the step after it (written by the worker's
// child). Timers fall due at any point of the poll, so this is the average case.
void BM_WorkerWakesADueTimer(benchmark::State& state) {
  WorkedHome h(state.range(0));
  kernel::SqliteEventStore& store = *h.store;
  int64_t n = 0;
  for (auto _ : state) {
    std::string id = "t" + std::to_string(n++);
    runLoom({"--home", h.home, "run", "example.timer", "--id", id, "--input", "{\"sleepMs\":300}"},
            h.dir);
    if (!h.waitForEnd(id)) {
      state.SkipWithError("the worker did not wake a due timer within 30 s");
      return;
    }
    std::optional<int64_t> wakeAt;
    int64_t after = 0;
    for (const auto& e : store.read(id)) {
      if (e.type == kernel::EventType::kExecutionParked) wakeAt = kernel::parkedWakeAt(e.data);
      if (e.type == kernel::EventType::kStepCompleted && e.data.at("stepId") == "after") {
        after = e.atMillis;
      }
    }
    if (!wakeAt || after == 0) {
      state.SkipWithError("the timer run recorded no park or no step after it");
      return;
    }
    state.SetIterationTime(static_cast<double>(after - *wakeAt) / 1000.0);
  }
}
BENCHMARK(BM_WorkerWakesADueTimer)
    ->Arg(500)
    ->ArgName("pollMs")
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
