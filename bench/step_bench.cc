// Per-step cost of durable steps: ctx.step on the memory store and on
// SQLite, one commit per step and batched, group commit across concurrent executions, and
// replay of a long log. Run: ./build/release/bench/loom_step_bench (docs/benchmarks.md).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <thread>

#include "loom/content/sqlite_content_store.h"
#include "loom/kernel/forwarding_event_store.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/workflow/runtime.h"
#include "steps_workflow.h"
#include "support/temp_dir.h"

namespace {

using namespace loom;

using loom::testing::TempDir;

// A workflow of `steps` tiny steps.
workflow::WorkflowRegistry& registry() { return bench::stepsWorkflow(); }

effects::TaskRegistry& tasks() { return bench::noTasks(); }

// The store as it was before leases, for the runtime: acquiring, renewing and releasing write
// nothing and a leased append is a plain append. Wrapping a store in it measures, in one
// binary, what leases cost the runtime (the issue "Run ownership": within 5% of before).
class LeaselessStore : public kernel::ForwardingEventStore {
 public:
  using ForwardingEventStore::ForwardingEventStore;
  kernel::Lease acquireLease(const kernel::LeaseRequest& request) override {
    kernel::Lease lease;
    lease.executionId = request.executionId;
    lease.owner = request.owner;
    lease.token = 1;
    lease.expiresAtMillis = std::numeric_limits<int64_t>::max();
    return lease;
  }
  kernel::Lease renewLease(const kernel::Lease& lease, int64_t) override { return lease; }
  void releaseLease(const kernel::Lease&) override {}
  int64_t appendLeased(const kernel::Lease& lease, int64_t expectedNextSeq,
                       std::vector<kernel::Event> events) override {
    return target().append(lease.executionId, expectedNextSeq, std::move(events));
  }
};

// `store` itself (leases:1) or `store` wrapped in LeaselessStore (leases:0).
struct MaybeLeased {
  MaybeLeased(kernel::EventStore& store, bool leases)
      : leaseless(store), chosen(leases ? store : leaseless) {}
  LeaselessStore leaseless;
  kernel::EventStore& chosen;
};

void runSteps(benchmark::State& state, kernel::EventStore& store, int64_t stepsPerRun) {
  workflow::WorkflowRuntime rt(store, registry(), tasks(), nullptr);
  int64_t steps = 0;
  for (auto _ : state) {
    auto r = rt.start("bench.steps", json::value{{"steps", stepsPerRun}});
    benchmark::DoNotOptimize(r);
    steps += stepsPerRun;
  }
  state.SetItemsProcessed(steps);
  state.counters["ns/step"] = benchmark::Counter(
      static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_StepMemory(benchmark::State& state) {
  kernel::MemoryEventStore store;
  runSteps(state, store, 1000);
}
BENCHMARK(BM_StepMemory)->Unit(benchmark::kMillisecond);

void BM_StepSqlite(benchmark::State& state) {
  TempDir dir;
  kernel::SqliteEventStore store(
      {(dir.path() / "loom.db").string(),
       state.range(0) ? kernel::Durability::kFull : kernel::Durability::kNormal});
  MaybeLeased maybe(store, state.range(1) != 0);
  runSteps(state, maybe.chosen, 200);
}
// leases:0 is the runtime on the store as it was before leases (LeaselessStore).
BENCHMARK(BM_StepSqlite)
    ->Args({1, 1})
    ->Args({1, 0})
    ->Args({0, 1})
    ->ArgNames({"fsync", "leases"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The store alone, handed 100 events per append (one transaction, one commit).
void BM_AppendBatchedSqlite(benchmark::State& state) {
  TempDir dir;
  kernel::SqliteEventStore store({(dir.path() / "loom.db").string(), kernel::Durability::kFull});
  int64_t n = 0, events = 0;
  for (auto _ : state) {
    std::string id = "b" + std::to_string(n++);
    std::vector<kernel::Event> batch{kernel::executionStarted("bench", nullptr, {}, 0)};
    for (int i = 0; i < 99; ++i) {
      batch.push_back(kernel::stepCompleted("s" + std::to_string(i), "flow", "s",
                                            json::value{{"i", i}}, 0));
    }
    store.append(id, 1, std::move(batch));
    events += 100;
  }
  state.SetItemsProcessed(events);
  state.counters["ns/step"] = benchmark::Counter(
      static_cast<double>(events), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_AppendBatchedSqlite)->Unit(benchmark::kMillisecond);

// What a lease costs a durable append: `threads` executions at once, each appending its events
// one per commit (durability full, group commit merging them), through append (leased:0, the
// store before leases) or appendLeased under a lease taken first (leased:1, what the runtime
// does since leases: the fence is read in the append's transaction). One run measures both.
void BM_AppendOneAtATime(benchmark::State& state) {
  TempDir dir;
  kernel::SqliteEventStore store({(dir.path() / "loom.db").string(), kernel::Durability::kFull});
  const bool leased = state.range(0) != 0;
  const int threads = static_cast<int>(state.range(1));
  constexpr int kPerExecution = 50;
  int64_t round = 0, events = 0;
  const kernel::LeaseOwner owner = kernel::processLeaseOwner();  // once, as a runtime does
  for (auto _ : state) {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        std::string id = "e" + std::to_string(round) + "-" + std::to_string(t);
        std::optional<kernel::Lease> lease;
        if (leased) {
          lease = store.acquireLease({id, owner, 15'000, std::nullopt});
        }
        auto append = [&](int64_t seq, kernel::Event e) {
          std::vector<kernel::Event> one;
          one.push_back(std::move(e));
          return lease ? store.appendLeased(*lease, seq, std::move(one))
                       : store.append(id, seq, std::move(one));
        };
        int64_t seq = append(1, kernel::executionStarted("bench", nullptr, {}, 0));
        for (int i = 1; i < kPerExecution; ++i) {
          seq = append(seq, kernel::stepCompleted("s" + std::to_string(i), "flow", "s",
                                                  json::value{{"i", i}}, 0));
        }
      });
    }
    for (auto& w : workers) w.join();
    ++round;
    events += static_cast<int64_t>(threads) * kPerExecution;
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_AppendOneAtATime)
    ->ArgsProduct({{0, 1}, {1, 64}})
    ->ArgNames({"leased", "executions"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// N executions at once on the worker pool, durable commits merged by group commit.
void BM_GroupCommit(benchmark::State& state) {
  TempDir dir;
  kernel::SqliteEventStore store({(dir.path() / "loom.db").string(), kernel::Durability::kFull});
  const int runsAtOnce = static_cast<int>(state.range(0));
  workflow::RuntimeOptions options;
  options.workers = runsAtOnce;
  MaybeLeased maybe(store, state.range(1) != 0);
  workflow::WorkflowRuntime rt(maybe.chosen, registry(), tasks(), nullptr, options);
  int64_t steps = 0;
  constexpr int64_t kPerRun = 100;
  for (auto _ : state) {
    std::vector<std::future<workflow::RunResult>> runs;
    for (int i = 0; i < runsAtOnce; ++i) {
      runs.push_back(rt.startAsync("bench.steps", json::value{{"steps", kPerRun}}, {}));
    }
    for (auto& f : runs) f.get();
    steps += runsAtOnce * kPerRun;
  }
  state.SetItemsProcessed(steps);
  state.counters["commits"] = static_cast<double>(store.commits());
  // Each run's appends: EXECUTION_STARTED, one per step, EXECUTION_COMPLETED.
  state.counters["steps/commit"] =
      static_cast<double>(steps + 2 * steps / kPerRun) / static_cast<double>(store.commits());
}
// leases:0 is the runtime on the store as it was before leases (LeaselessStore).
BENCHMARK(BM_GroupCommit)
    ->ArgsProduct({{1, 2, 16, 64}, {1}})
    ->Args({64, 0})
    ->ArgNames({"runs", "leases"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A claim-check turn at concurrency: each of `threads` executions, 50 times, puts a distinct
// 3 kB tool result in the blobs packed in loom.db (SqliteContentCommit::kWithDatabase, as the
// embedded home does) and then appends the step that cites it (durability full). put:0 appends
// only, the same turn with claim-check off.
void BM_OffloadedTurn(benchmark::State& state) {
  TempDir dir;
  const std::string path = (dir.path() / "loom.db").string();
  kernel::SqliteEventStore store({path, kernel::Durability::kFull});
  // put:1 puts on the blob store's own writer; put:2 on the writer the log lends (ADR 0017);
  // put:3 stages the put on that writer, committed with the citing append (ADR 0019).
  const int64_t mode = state.range(1);
  content::SqliteContentStore pack(path, systemClock(), 5000,
                                   content::SqliteContentCommit::kWithDatabase,
                                   mode >= 2 ? store.lendWriter() : nullptr);
  const int threads = static_cast<int>(state.range(0));
  const bool put = state.range(1) != 0;
  constexpr int kTurns = 50;
  int64_t round = 0, turns = 0;
  for (auto _ : state) {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        std::string id = "e" + std::to_string(round) + "-" + std::to_string(t);
        std::string result(3000, 'r');
        int64_t seq = store.append(id, 1, {kernel::executionStarted("bench", nullptr, {}, 0)});
        for (int i = 0; i < kTurns; ++i) {
          std::string stored = "stored in the log";
          if (put) {
            std::snprintf(result.data(), result.size(), "%s turn %d", id.c_str(), i);
            stored = mode == 3 ? pack.putDeferred(result) : pack.put(result);
          }
          seq = store.append(id, seq,
                             {kernel::stepCompleted("s" + std::to_string(i), "flow", "s",
                                                    json::value{{"ref", stored}}, 0)});
        }
      });
    }
    for (auto& w : workers) w.join();
    ++round;
    turns += threads * kTurns;
  }
  state.SetItemsProcessed(turns);
}
BENCHMARK(BM_OffloadedTurn)
    ->ArgsProduct({{1, 4, 16}, {0, 1, 2, 3}})
    ->ArgNames({"threads", "put"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The disk's floor for a durable step: append 100 bytes to a file and fdatasync it, in the
// same folder as the benchmarks above (BM_StepSqlite/fsync:1 is compared with this).
void BM_DiskFloor(benchmark::State& state) {
  TempDir dir;
  std::string path = (dir.path() / "floor").string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    state.SkipWithError("cannot create the floor file");
    return;
  }
  std::string record(100, 'x');
  for (auto _ : state) {
    if (::write(fd, record.data(), record.size()) != static_cast<ssize_t>(record.size()) ||
        ::fdatasync(fd) != 0) {
      state.SkipWithError("write or fdatasync failed");
      break;
    }
  }
  ::close(fd);
  state.counters["ns/step"] =
      benchmark::Counter(static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DiskFloor)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Replay: resume of an execution whose 10,000 steps are all recorded (parked at the end).
void BM_Replay10k(benchmark::State& state) {
  TempDir dir;
  kernel::SqliteEventStore store({(dir.path() / "loom.db").string(), kernel::Durability::kNormal});
  workflow::WorkflowRegistry wfs;
  wfs.add("bench.replay", "", [](workflow::WorkflowContext& ctx) {
    for (int64_t i = 0; i < 10000; ++i) {
      ctx.step("s" + std::to_string(i), [i] { return json::value{{"i", i}}; });
    }
    return ctx.awaitSignal("never");
  });
  workflow::WorkflowRuntime rt(store, wfs, tasks(), nullptr);
  auto r = rt.start("bench.replay", nullptr, {.id = "replay"});
  for (auto _ : state) {
    auto again = rt.resume("replay");
    if (again.replayedSteps != 10000) state.SkipWithError("replay did not return 10,000 steps");
  }
}
BENCHMARK(BM_Replay10k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
