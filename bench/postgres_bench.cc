// The PostgreSQL stores against the server's own floor, on one server in one run
// (docs/benchmarks.md, "PostgreSQL"): a bare autocommit INSERT of a 100-byte row, one durable
// append through PostgresEventStore (unleased and leased), and a 200-step run of the runtime on
// it; each reports the round trips per step. Needs a server: LOOM_BENCH_POSTGRES_URL (or
// LOOM_TEST_POSTGRES_URL); `eval "$(scripts/postgres-test-cluster.sh start)"` starts one.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <future>
#include <optional>
#include <random>
#include <vector>

#include "loom/postgres/postgres_event_store.h"
#include "loom/workflow/runtime.h"
#include "postgres/pg_connection.h"
#include "steps_workflow.h"

namespace {

using namespace loom;

std::string serverUrl() {
  for (const char* name : {"LOOM_BENCH_POSTGRES_URL", "LOOM_TEST_POSTGRES_URL"}) {
    if (const char* url = std::getenv(name)) return url;
  }
  return "";
}

// A fresh schema per benchmark run.
postgres::PostgresOptions freshSchema() {
  static std::mt19937_64 random{std::random_device{}()};
  return {serverUrl(), "bench_" + std::to_string(random() % 1'000'000'000)};
}

bool needServer(benchmark::State& state) {
  if (!serverUrl().empty()) return true;
  state.SkipWithError("set LOOM_BENCH_POSTGRES_URL (or start scripts/postgres-test-cluster.sh)");
  return false;
}

void reportRoundTrips(benchmark::State& state, int64_t before, int64_t steps) {
  state.counters["roundTrips/step"] =
      static_cast<double>(postgres::roundTrips() - before) / static_cast<double>(steps);
  state.counters["us/step"] = benchmark::Counter(
      static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The floor: one autocommit INSERT of a 100-byte row per iteration, prepared.
void BM_PgBareInsert(benchmark::State& state) {
  if (!needServer(state)) return;
  auto options = freshSchema();
  postgres::migrate(options);
  postgres::Connection conn(options.url, options.schema);
  conn.run("CREATE TABLE floor (id bigserial PRIMARY KEY, body bytea NOT NULL)", "create floor");
  const std::string body(100, 'x');
  int64_t before = postgres::roundTrips(), n = 0;
  for (auto _ : state) {
    conn.exec("INSERT INTO floor (body) VALUES ($1)", {postgres::Param::bytes(body)}, "insert");
    ++n;
  }
  reportRoundTrips(state, before, n);
}
BENCHMARK(BM_PgBareInsert)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One STEP_COMPLETED per append, sequential, through the store (leased:1 under a lease).
void BM_PgAppend(benchmark::State& state) {
  if (!needServer(state)) return;
  auto options = freshSchema();
  postgres::migrate(options);
  postgres::PostgresEventStore store(options);
  const bool leased = state.range(0) != 0;
  std::optional<kernel::Lease> lease;
  if (leased) {
    lease = store.acquireLease({"e1", kernel::processLeaseOwner(), 600'000, std::nullopt});
  }
  auto append = [&](int64_t seq, kernel::Event e) {
    std::vector<kernel::Event> one;
    one.push_back(std::move(e));
    return lease ? store.appendLeased(*lease, seq, std::move(one))
                 : store.append("e1", seq, std::move(one));
  };
  int64_t seq = append(1, kernel::executionStarted("bench", nullptr, {}, 0));
  int64_t before = postgres::roundTrips(), n = 0;
  for (auto _ : state) {
    seq = append(seq, kernel::stepCompleted("s" + std::to_string(seq), "flow", "s",
                                            json::value{{"i", seq}}, 0));
    ++n;
  }
  reportRoundTrips(state, before, n);
}
BENCHMARK(BM_PgAppend)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("leased")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

workflow::WorkflowRegistry& registry() { return bench::stepsWorkflow(); }

// The runtime's durable step on PostgreSQL: 200-step runs, leases on, one append per step.
void BM_PgRuntimeStep(benchmark::State& state) {
  if (!needServer(state)) return;
  auto options = freshSchema();
  postgres::migrate(options);
  postgres::PostgresEventStore store(options);
  effects::TaskRegistry tasks;
  workflow::WorkflowRuntime rt(store, registry(), tasks, nullptr);
  constexpr int64_t kSteps = 200;
  int64_t before = postgres::roundTrips(), steps = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(rt.start("bench.steps", json::value{{"steps", kSteps}}));
    steps += kSteps;
  }
  reportRoundTrips(state, before, steps);
}
BENCHMARK(BM_PgRuntimeStep)->Unit(benchmark::kMillisecond)->UseRealTime();

// 64 runs at once in one process (64 runtime threads), 20 steps each: steps/s on one server,
// the "64 concurrent runs" beside DBOS's (bench/dbos/dbos_bench.mjs).
void BM_PgConcurrentRuns(benchmark::State& state) {
  if (!needServer(state)) return;
  auto options = freshSchema();
  const int runs = static_cast<int>(state.range(0));
  options.maxIdleConnections = static_cast<std::size_t>(state.range(1));
  postgres::migrate(options);
  postgres::PostgresEventStore store(options);
  effects::TaskRegistry tasks;
  workflow::RuntimeOptions rtOptions;
  rtOptions.workers = static_cast<unsigned>(runs);
  workflow::WorkflowRuntime rt(store, registry(), tasks, nullptr, rtOptions);
  constexpr int64_t kSteps = 20;
  auto round = [&] {
    std::vector<std::future<workflow::RunResult>> running;
    for (int i = 0; i < runs; ++i) {
      running.push_back(rt.startAsync("bench.steps", json::value{{"steps", kSteps}}, {}));
    }
    for (auto& r : running) benchmark::DoNotOptimize(r.get());
  };
  round();  // warm, as DBOS's figures are: the pool's connections open and prepare here
  int64_t before = postgres::roundTrips(), steps = 0;
  for (auto _ : state) {
    round();
    steps += kSteps * runs;
  }
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
  reportRoundTrips(state, before, steps);
}
BENCHMARK(BM_PgConcurrentRuns)
    ->Args({64, 8})
    ->Args({64, 64})
    ->ArgNames({"runs", "idle"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
