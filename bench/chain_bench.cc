// Middleware chain overhead per effect (<= 300 ns median with 4 middleware).
// Compares the bare effect (a chain with no layer) with a chain of 4 pass-through
// middleware, and with the shape boot builds (kill switch + 3 pass-through). Results and the
// command line: docs/benchmarks.md, "Middleware chain".
#include <benchmark/benchmark.h>

#include <memory>

#include "loom/effects/middleware.h"
#include "loom/middleware/kill_switch.h"

namespace {

using loom::effects::EffectChain;
using loom::effects::EffectContext;
using loom::effects::Middleware;
using loom::effects::Next;

class PassThrough : public Middleware {
 public:
  std::string_view name() const override { return "passThrough"; }
  loom::json::value invoke(const EffectContext& ctx, loom::json::value input,
                           const Next& next) override {
    return next(ctx, std::move(input));
  }
};

EffectContext benchCtx() { return {"exec-1", "step-1", "fetch", "tool", std::nullopt, 1, false}; }

void runChain(benchmark::State& state, const EffectChain& chain) {
  EffectContext ctx = benchCtx();
  auto effect = [](const EffectContext&, loom::json::value in) { return in; };
  int64_t i = 0;
  for (auto _ : state) {
    loom::json::value out = chain.invoke(ctx, loom::json::value(++i), effect);
    benchmark::DoNotOptimize(out);
  }
}

void BM_BareEffect(benchmark::State& state) { runChain(state, EffectChain()); }

void BM_FourPassThrough(benchmark::State& state) {
  std::vector<std::shared_ptr<Middleware>> layers;
  for (int n = 0; n < 4; ++n) layers.push_back(std::make_shared<PassThrough>());
  runChain(state, EffectChain(std::move(layers)));
}

// The kill switch asks its cached set (re-read from SQLite at most every 250 ms).
void BM_KillSwitchPlusThreePassThrough(benchmark::State& state) {
  auto store = std::make_shared<loom::middleware::KillSwitchStore>(
      loom::middleware::KillSwitchOptions{":memory:"});
  store->kill("someOtherEffect");
  std::vector<std::shared_ptr<Middleware>> layers{
      std::make_shared<loom::middleware::KillSwitchMiddleware>(store)};
  for (int n = 0; n < 3; ++n) layers.push_back(std::make_shared<PassThrough>());
  runChain(state, EffectChain(std::move(layers)));
}

BENCHMARK(BM_BareEffect);
BENCHMARK(BM_FourPassThrough);
BENCHMARK(BM_KillSwitchPlusThreePassThrough);

}  // namespace

BENCHMARK_MAIN();
