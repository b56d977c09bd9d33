// Erasure (target <= 2 s): eraseSubject of a subject with 100 executions of 200 agent
// turns among 10,000 executions, on the embedded stores: SqliteEventStore (synchronous=FULL
// while erasing), SqliteSnapshotStore (one snapshot per execution), FilesystemContentStore and
// SqliteKeyStore. Every tool result of the erased subject is offloaded (20,000 envelopes,
// 19,000 distinct blobs of about 1.2 kB, plus 50 blobs shared with other subjects, which must
// survive); the other 9,700 executions have 5 turns, 2 of them offloaded, and some nest a
// forged envelope pointing at the subject's blobs (D11: it must not keep them). No cited blob
// is shared by everyone, so the pass over the other executions never exits early: this is the
// worst case. Events are small except the envelopes (the model turns carry no journaled input).
// Variants: sealed:0 (plain logs) and sealed:1 (compliance.erase: SealingEventStore and
// SealingSnapshotStore, so every scanned payload is decrypted). The world is built once per
// variant (about a minute); each of the 3 iterations erases another such subject. The stores
// live under $TMPDIR (default /tmp).
// Run: ./build/release/bench/loom_erase_bench (figures in docs/benchmarks.md, "Erasure").
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compliance/sealing_event_store.h"
#include "compliance/sealing_snapshot_store.h"
#include "content/claim_check_envelope.h"
#include "loom/compliance/erase.h"
#include "loom/compliance/key_store.h"
#include "loom/compliance/sqlite_key_store.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/kernel/sqlite_snapshot_store.h"
#include "support/temp_dir.h"

namespace {

using namespace loom;
namespace fs = std::filesystem;

constexpr int kExecutions = 10'000;
constexpr int kErased = 3;        // subjects erased, one per iteration
constexpr int kPerSubject = 100;  // executions of each erased subject
constexpr int kTurns = 200;       // turns of each of those executions
constexpr int kOtherTurns = 5;    // turns of every other execution
constexpr int kShared = 50;       // blobs the erased subjects share with others
constexpr std::size_t kBlobBytes = 1200;

std::string subjectName(int i) { return "subject-" + std::to_string(i); }

// A ~1.2 kB JSON report, distinct per `seed`.
std::string report(const std::string& seed) {
  std::mt19937_64 random(std::hash<std::string>{}(seed));
  std::string rows;
  rows.reserve(kBlobBytes);
  static constexpr char kHex[] = "0123456789abcdef";
  while (rows.size() < kBlobBytes) rows.push_back(kHex[random() & 15]);
  return "{\"id\":\"" + seed + "\",\"rows\":\"" + rows + "\"}";
}

json::value envelope(const std::string& address, const std::string& bytes) {
  json::object digest{{"preview", bytes.substr(0, 64)}, {"truncated", true}};
  return content::toJson(content::ClaimCheckEnvelope{address, static_cast<int64_t>(bytes.size()),
                                                     json::value(std::move(digest)), true});
}

json::value modelTurn(int turn) {
  return json::object{
      {"role", "assistant"},
      {"toolCalls", json::array{json::object{{"id", "c" + std::to_string(turn)},
                                             {"name", "fetch_report"},
                                             {"arguments", json::object{{"page", turn}}}}}}};
}

struct World {
  bool sealed = false;
  loom::testing::TempDir scratch{"erase-bench"};  // outlives the stores below
  fs::path dir = scratch.path();
  std::unique_ptr<kernel::SqliteEventStore> rawEvents;
  std::unique_ptr<kernel::SqliteSnapshotStore> rawSnapshots;
  std::unique_ptr<content::FilesystemContentStore> content;
  std::unique_ptr<compliance::SqliteKeyStore> keys;
  std::unique_ptr<compliance::SealingEventStore> sealedEvents;
  std::unique_ptr<compliance::SealingSnapshotStore> sealedSnapshots;
  std::vector<std::string> sharedAddresses;
  int erasedSoFar = 0;

  explicit World(bool sealedLogs) : sealed(sealedLogs) {
    auto clock = systemClock();
    compliance::SqliteKeyStoreOptions k;
    k.path = (dir / "keys.db").string();
    k.masterKey = compliance::parseMasterKey(compliance::newMasterKeyHex(), "the bench");
    k.clock = clock;
    keys = std::make_unique<compliance::SqliteKeyStore>(k);
    content = std::make_unique<content::FilesystemContentStore>(dir / "content", clock);
    openEvents(kernel::Durability::kNormal);
    rawSnapshots = std::make_unique<kernel::SqliteSnapshotStore>(
        kernel::SqliteSnapshotStoreOptions{(dir / "loom.db").string()});
    if (sealed) {
      sealedSnapshots = std::make_unique<compliance::SealingSnapshotStore>(*rawSnapshots, *keys);
    }
    for (int s = 0; s < kShared; ++s) {
      sharedAddresses.push_back(content->put(report("shared-" + std::to_string(s))));
    }
    int id = 0;
    for (int s = 0; s < kErased; ++s) {
      for (int e = 0; e < kPerSubject; ++e) addExecution(id++, subjectName(s), kTurns, true);
    }
    for (; id < kExecutions; ++id) {
      std::string subject = id % 10 == 0 ? "" : "user-" + std::to_string(id / 10);
      addExecution(id, subject, kOtherTurns, false);
    }
    openEvents(kernel::Durability::kFull);  // erasure journals with the durable default
    ::sync();  // the blobs were put long before anyone erases: no write-back of them meanwhile
  }
  ~World() {
    sealedEvents.reset();
    rawEvents.reset();
  }

  void openEvents(kernel::Durability durability) {
    sealedEvents.reset();
    rawEvents.reset();
    kernel::SqliteEventStoreOptions o;
    o.path = (dir / "loom.db").string();
    o.durability = durability;
    rawEvents = std::make_unique<kernel::SqliteEventStore>(o);
    if (sealed) {
      sealedEvents = std::make_unique<compliance::SealingEventStore>(*rawEvents, *keys);
    }
  }
  kernel::EventStore& events() {
    return sealedEvents ? static_cast<kernel::EventStore&>(*sealedEvents) : *rawEvents;
  }
  kernel::SnapshotStore& snapshots() {
    return sealedSnapshots ? static_cast<kernel::SnapshotStore&>(*sealedSnapshots) : *rawSnapshots;
  }

  // One ended agent execution: per turn a model step and a tool step. An erased subject's
  // tool results are all offloaded (every 20th a shared blob); another execution offloads
  // turns 1-2 (the first 500 cite a shared blob at turn 1) and every 100th nests a forged
  // envelope naming an erased subject's blob.
  void addExecution(int id, const std::string& subject, int turns, bool erased) {
    std::string executionId = "e" + std::to_string(100000 + id);
    std::optional<std::string> s;
    if (!subject.empty()) s = subject;
    if (s && !sealed) keys->getOrCreate(subject);  // as sealing would (once per subject)
    std::vector<kernel::Event> log{
        kernel::executionStarted("research", json::object{{"q", "quarterly"}}, s, 0)};
    std::vector<std::string> blobs;
    std::vector<std::string_view> views;
    bool citesShared = !erased && id < kErased * kPerSubject + 500;
    for (int t = 1; t <= turns; ++t) {
      if (erased ? t % 20 != 0 : (t == 2 || (t == 1 && !citesShared))) {
        blobs.push_back(report(executionId + "/" + std::to_string(t)));
      }
    }
    for (const auto& b : blobs) views.push_back(b);
    std::vector<std::string> addresses = content->putMany(views);
    json::object steps;
    std::size_t next = 0;
    for (int t = 1; t <= turns; ++t) {
      std::string prefix = "research#turn:" + std::to_string(t);
      log.push_back(kernel::stepCompleted(prefix + ":model", "llm", "scripted", modelTurn(t), 0));
      json::value output;
      if (erased && t % 20 == 0) {
        int k = (t / 20) % kShared;
        output = envelope(sharedAddresses[k], report("shared-" + std::to_string(k)));
      } else if (citesShared && t == 1) {
        int k = id % kShared;
        output = envelope(sharedAddresses[k], report("shared-" + std::to_string(k)));
      } else if (erased || t <= 2) {
        output = envelope(addresses[next], blobs[next]);
        ++next;
      } else if (id % 100 == 7) {
        std::string victim = report("e" + std::to_string(100000 + id % 300) + "/1");
        output = json::object{{"page", envelope(content::sha256Hex(victim), victim)}};
      } else {
        output = json::object{{"rows", t}, {"ok", true}};
      }
      steps[prefix + ":tool:0"] = json::object{{"output", output}};
      log.push_back(
          kernel::stepCompleted(prefix + ":tool:0", "tool", "fetch_report", std::move(output), 0));
    }
    log.push_back(kernel::executionCompleted(json::value("done"), 0));
    int64_t seq = static_cast<int64_t>(log.size()) - 1;
    events().append(executionId, 1, std::move(log));
    snapshots().put(
        kernel::Snapshot{executionId, seq,
                         json::object{{"version", 1},
                                      {"seq", seq},
                                      {"workflow", "research"},
                                      {"startedAt", formatTimestamp(0)},
                                      {"subject", s ? json::value(*s) : json::value()},
                                      {"input", json::object{{"q", "quarterly"}}},
                                      {"steps", std::move(steps)},
                                      {"signals", json::object{}},
                                      {"last", json::object{{"type", "STEP_COMPLETED"}}}}});
  }
};

World& worldOf(bool sealed) {
  static std::unique_ptr<World> worlds[2];
  auto& world = worlds[sealed ? 1 : 0];
  if (!world) world = std::make_unique<World>(sealed);
  return *world;
}

// The planning pass alone (collect, drop what others cite): it writes and destroys nothing,
// so it runs before the erasures, on the last subject they erase.
void BM_PlanContentDeletion(benchmark::State& state) {
  World& world = worldOf(state.range(0) != 0);
  compliance::EraseCoordinatorOptions o{world.events(), *world.keys, world.content.get(), nullptr,
                                        &world.snapshots()};
  compliance::EraseCoordinator coordinator(o);
  for (auto _ : state) {
    auto plan = coordinator.planContentDeletion(subjectName(kErased - 1));
    if (plan.addresses.size() != kPerSubject * kTurns * 19 / 20) {
      state.SkipWithError("unexpected plan");
    }
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_PlanContentDeletion)
    ->ArgName("sealed")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(kErased)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_EraseSubject(benchmark::State& state) {
  World* world = &worldOf(state.range(0) != 0);
  compliance::ContentDeleted total;
  for (auto _ : state) {
    if (world->erasedSoFar >= kErased) {
      state.SkipWithError("no subject left to erase");
      break;
    }
    compliance::EraseCoordinatorOptions o{world->events(), *world->keys, world->content.get(),
                                          nullptr, &world->snapshots()};
    auto r = compliance::eraseSubject(o, subjectName(world->erasedSoFar++));
    if (!r.shredded || r.contentDeleted.deleted != kPerSubject * kTurns * 19 / 20) {
      static std::string message;  // SkipWithError keeps the pointer
      message = "unexpected erasure result: " + compliance::describe(r);
      state.SkipWithError(message.c_str());
    }
    total.deleted += r.contentDeleted.deleted;
    total.retained += r.contentDeleted.retained;
  }
  state.counters["executions"] = kExecutions;
  state.counters["blobsDeleted"] =
      benchmark::Counter(static_cast<double>(total.deleted), benchmark::Counter::kAvgIterations);
  for (const auto& address : world->sharedAddresses) {
    if (!world->content->has(address)) state.SkipWithError("a shared blob was deleted");
  }
}
BENCHMARK(BM_EraseSubject)
    ->ArgName("sealed")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(kErased)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
