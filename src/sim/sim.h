// The deterministic simulator (`loom sim`, docs/testing.md). One seed is one world: a fresh
// embedded home (SQLite logs, a filesystem content store, keys) or a fresh PostgreSQL schema
// (SeedOptions::postgresUrl), a manual clock, runs of the
// simulator's workload (workload.h) with subjects, claim-check and sealing as the seed draws
// them, two runners (apps with their own lease owners) and an operator's app. A seeded schedule
// drives the runs and, at chosen store writes, crashes a runner, fails the write as the disk
// would, or runs another actor's work right there (an erasure, a sweep, a retention run, a
// second runner, a takeover after the lease expired, a late or duplicate signal, a cancel,
// a clock jump). Then every run is driven to its end with the faults off, and the invariants
// are checked. Everything runs on one thread: the same seed makes the same choices and the
// same report on every run of the same build.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loom::sim {

struct SeedReport {
  uint64_t seed = 0;
  std::vector<std::string> violations;    // every invariant that did not hold; empty: passed
  std::map<std::string, int64_t> counts;  // what the seed did: crashes, faults, races, runs...
  std::vector<std::string> trace;         // what happened, in order (SeedOptions::trace)
  bool passed() const { return violations.empty(); }
};

struct SeedOptions {
  uint64_t seed = 1;
  // Where the seed's home is made (and removed after); empty: the system's temporary folder.
  std::filesystem::path scratch;
  bool trace = false;  // keep the trace (for a replay)
  // Non-empty: every store on this PostgreSQL server (logs, leases, control log, snapshots,
  // blobs, keys, ledger, kill switch), in a schema of the seed's own, dropped after. Their
  // times are the world's manual clock, not the server's.
  std::string postgresUrl;
};

// Runs one seed. Throws only what keeps it from running at all (no scratch folder).
SeedReport runSeed(const SeedOptions& options);

// The command that replays `seed` exactly, with its trace (`onPostgres`: on the same server).
std::string replayCommand(uint64_t seed, bool onPostgres = false);

}  // namespace loom::sim
