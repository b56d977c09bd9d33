// Sealing overhead (target <= 15% wall time): the same 200-step run of one subject on
// SQLite, with its log clear and sealed (SealingEventStore over the SQLite event store, keys in
// a SqliteKeyStore in the same loom.db), at both durabilities; and a read of the 200-step log
// (what a replay scans), clear and unsealed. Each step's output is about 1 KiB of JSON, the
// size of a typical tool result kept inline. Run: ./build/release/bench/loom_sealing_bench
// (docs/benchmarks.md, "Sealing").
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "compliance/sealing_event_store.h"
#include "loom/compliance/sqlite_key_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/workflow/runtime.h"
#include "support/temp_dir.h"

namespace {

using namespace loom;

constexpr int64_t kSteps = 200;

using loom::testing::TempDir;

// About 1 KiB of JSON per step.
json::value stepOutput(int64_t i) {
  json::array hits;
  for (int h = 0; h < 8; ++h) {
    hits.push_back(json::object{{"id", "doc-" + std::to_string(i * 8 + h)},
                                {"title", "Quarterly report section " + std::to_string(h)},
                                {"score", 0.5 + h / 100.0},
                                {"snippet", "revenue grew in the third quarter, driven by"}});
  }
  return json::object{{"step", i}, {"hits", std::move(hits)}};
}

workflow::WorkflowRegistry& registry() {
  static workflow::WorkflowRegistry r = [] {
    workflow::WorkflowRegistry w;
    w.add("bench.sealing", "", [](workflow::WorkflowContext& ctx) {
      for (int64_t i = 0; i < kSteps; ++i) {
        ctx.step("s" + std::to_string(i), [i] { return stepOutput(i); });
      }
      return json::value(kSteps);
    });
    return w;
  }();
  return r;
}

effects::TaskRegistry& tasks() {
  static effects::TaskRegistry t;
  return t;
}

// One home: loom.db with the events (and, sealed, the keys).
struct Home {
  Home(bool sealed, kernel::Durability durability)
      : logs({(dir.path() / "loom.db").string(), durability}) {
    if (!sealed) return;
    std::array<uint8_t, 32> master{};
    master.fill(0x5a);
    keys = std::make_unique<compliance::SqliteKeyStore>(
        compliance::SqliteKeyStoreOptions{(dir.path() / "loom.db").string(), master, "bench"});
    sealing = std::make_unique<compliance::SealingEventStore>(logs, *keys);
  }
  kernel::EventStore& store() {
    return sealing ? static_cast<kernel::EventStore&>(*sealing) : logs;
  }

  TempDir dir;
  kernel::SqliteEventStore logs;
  std::unique_ptr<compliance::SqliteKeyStore> keys;
  std::unique_ptr<compliance::SealingEventStore> sealing;
};

// Arguments: sealed (0/1), fsync (1: durability full, 0: normal).
void BM_Run200Steps(benchmark::State& state) {
  Home home(state.range(0) != 0,
            state.range(1) != 0 ? kernel::Durability::kFull : kernel::Durability::kNormal);
  workflow::WorkflowRuntime rt(home.store(), registry(), tasks(), nullptr);
  int64_t steps = 0;
  for (auto _ : state) {
    auto r = rt.start("bench.sealing", nullptr, workflow::RunOptions{{}, "alice"});
    benchmark::DoNotOptimize(r);
    steps += kSteps;
  }
  state.SetItemsProcessed(steps);
  state.counters["per_step"] = benchmark::Counter(
      static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Run200Steps)
    ->ArgsProduct({{0, 1}, {1, 0}})
    ->ArgNames({"sealed", "fsync"})
    ->Unit(benchmark::kMillisecond);

// Reading the whole 200-step log back (a replay's scan), clear vs unsealing.
void BM_Read200StepLog(benchmark::State& state) {
  Home home(state.range(0) != 0, kernel::Durability::kNormal);
  workflow::WorkflowRuntime rt(home.store(), registry(), tasks(), nullptr);
  std::string id = rt.start("bench.sealing", nullptr, workflow::RunOptions{{}, "alice"}).id;
  int64_t events = 0;
  for (auto _ : state) {
    int64_t n = 0;
    home.store().scan(id, 1, [&](const kernel::Event& e) {
      benchmark::DoNotOptimize(e);
      ++n;
    });
    events += n;
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_Read200StepLog)->Arg(0)->Arg(1)->ArgName("sealed")->Unit(benchmark::kMillisecond);

// Where a sealed append's extra time goes: the seal itself (CPU), the subject's key lookup in
// the SQLite key store, and the metadata read that finds an execution's subject.
void BM_SealOneStep(benchmark::State& state) {
  std::array<uint8_t, 32> bytes{};
  bytes.fill(1);
  compliance::DataKey key("k", bytes);
  kernel::Event e = kernel::stepCompleted("s1", "flow", "s1", stepOutput(1), 0);
  e.seq = 2;
  for (auto _ : state) benchmark::DoNotOptimize(compliance::sealEvent("x", e, "alice", key));
}
BENCHMARK(BM_SealOneStep)->Unit(benchmark::kMicrosecond);

void BM_KeyLookup(benchmark::State& state) {
  Home home(true, kernel::Durability::kNormal);
  home.keys->getOrCreate("alice");
  for (auto _ : state) benchmark::DoNotOptimize(home.keys->getOrCreate("alice"));
}
BENCHMARK(BM_KeyLookup)->Unit(benchmark::kMicrosecond);

void BM_SubjectLookup(benchmark::State& state) {
  Home home(false, kernel::Durability::kNormal);
  home.logs.append("x", 1, {kernel::executionStarted("wf", nullptr, "alice", 0)});
  for (auto _ : state) benchmark::DoNotOptimize(home.logs.info("x"));
}
BENCHMARK(BM_SubjectLookup)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
