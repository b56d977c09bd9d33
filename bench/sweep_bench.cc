// Sweep throughput: 1,000,000 blobs cited by 10,000 executions (100 retained
// envelopes each), memory stores so the figure is the sweep's own cost. Reports cited refs
// scanned per second. Run: ./build/release/bench/loom_sweep_bench (docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include "content/claim_check_envelope.h"
#include "loom/content/memory_content_store.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/sweep/sweep.h"

namespace {

using namespace loom;

struct World {
  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>();
  content::MemoryContentStore blobs{clock};
  kernel::MemoryEventStore logs;
  int64_t refs = 0;

  World(int executions, int perExecution) {
    for (int e = 0; e < executions; ++e) {
      std::vector<kernel::Event> events{kernel::executionStarted("bench", nullptr, {}, 0)};
      for (int s = 0; s < perExecution; ++s) {
        std::string address = blobs.put("blob " + std::to_string(e) + "/" + std::to_string(s));
        json::value env =
            content::toJson(content::ClaimCheckEnvelope{address, 16, std::nullopt, true});
        events.push_back(kernel::stepCompleted("a#turn:" + std::to_string(s + 1) + ":tool:0",
                                               "tool", "fetch", std::move(env), 0));
        ++refs;
      }
      events.push_back(kernel::executionCompleted(1, 0));
      logs.append("e" + std::to_string(e), 1, std::move(events));
    }
    clock->advance(365LL * 24 * 3600 * 1000);
  }
};

void BM_Sweep(benchmark::State& state) {
  static World world(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    sweep::SweepOptions o;
    o.clock = world.clock;
    auto report = sweep::sweepUnpinnedContent(world.blobs, sweep::SweepSources{&world.logs, {}}, o);
    if (report.deleted != 0) state.SkipWithError("the sweep deleted a load-bearing blob");
    benchmark::DoNotOptimize(report);
  }
  state.counters["refs/s"] = benchmark::Counter(
      static_cast<double>(world.refs) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["blobs"] = static_cast<double>(world.refs);
}
BENCHMARK(BM_Sweep)
    ->Args({10000, 100})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
