// The control log's reads as a run listing and an append make them, after N BLOB_READ events
// (the inspector journals one per blob read): shredTimes (every `loom ls`, `GET
// /api/v1/executions`) and appendControlAtEnd. Both must cost the same after 10 and after
// 10,000 such events (docs/benchmarks.md, "Control log").
#include <benchmark/benchmark.h>

#include "compliance/erase_journal.h"
#include "loom/kernel/sqlite_event_store.h"
#include "support/temp_dir.h"

namespace loom {
namespace {

void fill(kernel::EventStore& store, int64_t blobReads) {
  std::vector<kernel::ControlEvent> batch;
  for (int64_t i = 0; i < blobReads; ++i) {
    batch.push_back({0, "BLOB_READ", 1, json::object{{"execution", "e"}, {"address", "x"}}});
  }
  store.appendControl(1, std::move(batch));
  store.appendControl(blobReads + 1, {{0, "SUBJECT_SHREDDED", 1, json::object{{"subject", "a"}}}});
}

void BM_ListingShredTimes(benchmark::State& state) {
  testing::TempDir dir;
  kernel::SqliteEventStore store({.path = dir / "loom.db"});
  fill(store, state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(compliance::detail::shredTimes(store));
}
BENCHMARK(BM_ListingShredTimes)->Arg(10)->Arg(10'000)->Unit(benchmark::kMicrosecond);

void BM_AppendControlAtEnd(benchmark::State& state) {
  testing::TempDir dir;
  kernel::SqliteEventStore store(
      {.path = dir / "loom.db", .durability = kernel::Durability::kNormal});
  fill(store, state.range(0));
  for (auto _ : state) {
    kernel::appendControlAtEnd(store, {0, "BLOB_READ", 1, json::object{{"execution", "e"}}});
  }
}
BENCHMARK(BM_AppendControlAtEnd)->Arg(10)->Arg(10'000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace loom

BENCHMARK_MAIN();
