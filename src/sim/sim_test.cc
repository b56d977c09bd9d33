// The simulator's kept seeds (docs/testing.md, "Kept seeds"): each passes, and each still
// drives the interleaving it was kept for. A seed's schedule depends on the workload and the
// actors; a change to either that makes a kept seed miss its race fails here: pick a new seed
// for it with `loom sim --seeds 2000 --json` (its counts name the races each seed drove).
#include "sim.h"

#include <gtest/gtest.h>

namespace loom::sim {
namespace {

struct KeptSeed {
  uint64_t seed;
  const char* race;  // a count the seed must make (sim.h's SeedReport::counts)
  const char* why;
};

// Each of these fails when the fix it names is undone (checked by undoing it: docs/testing.md).
constexpr KeptSeed kKeptSeeds[] = {
    {254, "erasures",
     "an erasure deletes a blob another subject's run puts again meanwhile, unless its delete is "
     "conditional on the touch cutoff (deleteIfUntouchedSince)"},
    {23, "race.sweepVsRunningRun",
     "a sweep deletes a blob a running run put and has not journaled yet, unless it spares what "
     "was touched since the oldest last event of a run that has not ended"},
    {9, "race.twoRunners", "a second runner runs a run another holds, unless its lease is refused"},
    {2, "race.takeover",
     "a runner stalled past its lease's ttl wakes and starts another step after the run was "
     "taken over, unless it reads the store by the runtime's clock before it starts one"},
    {85, "race.takeover",
     "a runner stalled after journaling one tool call of an agent's turn wakes after a takeover "
     "and runs the next call of the batch, unless it reads the store before each call"},
    {31, "erasures",
     "an erasure cut off after its intent leaves the blobs the subject put before the retry's "
     "shred, unless the retry erases them in a fresh pass"},
    {4, "sweeps",
     "a sweep reclaims a telemetry blob after its run ended but before the ttl passed, unless it "
     "keeps it for the ttl"},
    {257, "faults.tornPut",
     "a crash inside a put leaves its blob torn; the run's put of those bytes again only touches "
     "the torn copy and the run cites a blob that does not read, unless the put rewrites a copy "
     "whose bytes do not match"},
};

class KeptSeeds : public ::testing::TestWithParam<KeptSeed> {};

TEST_P(KeptSeeds, PassAndStillDriveTheirRace) {
  const KeptSeed& kept = GetParam();
  SeedReport report = runSeed({.seed = kept.seed});
  EXPECT_TRUE(report.passed()) << kept.why << "\n  first violation: "
                               << (report.violations.empty() ? "" : report.violations.front())
                               << "\n  replay: " << replayCommand(kept.seed);
  EXPECT_GT(report.counts[kept.race], 0)
      << "seed " << kept.seed << " no longer drives " << kept.race << " (" << kept.why << ")";
}

INSTANTIATE_TEST_SUITE_P(Sim, KeptSeeds, ::testing::ValuesIn(kKeptSeeds),
                         [](const auto& info) { return "seed" + std::to_string(info.param.seed); });

// The same seed makes the same choices: its trace and counts are equal on a second run, so the
// replay command a failure prints reproduces it.
TEST(Sim, ASeedReplaysExactly) {
  for (uint64_t seed : {3u, 254u}) {
    SeedReport first = runSeed({.seed = seed, .trace = true});
    SeedReport second = runSeed({.seed = seed, .trace = true});
    EXPECT_EQ(first.trace, second.trace) << "seed " << seed;
    EXPECT_EQ(first.counts, second.counts) << "seed " << seed;
    EXPECT_GT(first.trace.size(), 10u);
  }
}

TEST(Sim, TheReplayCommandNamesTheSeed) {
  EXPECT_EQ(replayCommand(42), "loom sim --from 42 --seeds 1 --trace");
}

}  // namespace
}  // namespace loom::sim
