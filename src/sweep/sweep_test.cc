#include "loom/sweep/sweep.h"

#include <gtest/gtest.h>

#include "content/claim_check_envelope.h"
#include "loom/content/memory_content_store.h"
#include "loom/effects/taint.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/util/error.h"
#include "support/faulty_content_store.h"

namespace loom::sweep {
namespace {

constexpr int64_t kHour = 3600LL * 1000, kDay = 24 * kHour;

class SweepTest : public ::testing::Test {
 protected:
  std::string put(const std::string& text) { return store_.put(text); }

  json::value envelope(const std::string& address, bool retain) {
    return content::toJson(content::ClaimCheckEnvelope{address, 1, std::nullopt, retain});
  }

  // An execution citing `output` from one tool step; ended unless `running`.
  void execution(const std::string& id, json::value output, bool running = false) {
    int64_t now = clock_->nowMillis();
    std::vector<kernel::Event> events{
        kernel::executionStarted("wf", nullptr, {}, now),
        kernel::stepCompleted("a#turn:1:tool:0", "tool", "t", std::move(output), now)};
    if (!running) events.push_back(kernel::executionCompleted(1, now));
    logs_.append(id, 1, std::move(events));
  }

  SweepReport sweep(std::vector<PinSource> pins = {}, bool dryRun = false) {
    SweepOptions o;
    o.ttlMillis = 7 * kDay;
    o.graceMillis = kHour;
    o.clock = clock_;
    o.dryRun = dryRun;
    return sweepUnpinnedContent(store_, SweepSources{&logs_, std::move(pins)}, o);
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  content::MemoryContentStore store_{clock_};
  kernel::MemoryEventStore logs_;
};

TEST_F(SweepTest, LoadBearingRefsAreKeptForYears) {
  auto a = put("blob-a");
  execution("e1", envelope(a, true));
  execution("e2", effects::tainted(envelope(put("blob-t"), true), "mcp:x"));
  clock_->advance(3 * 365 * kDay);
  auto r = sweep();
  EXPECT_EQ(r.deleted, 0);
  EXPECT_EQ(r.keptByReason["loadBearing"], 2);
  EXPECT_TRUE(store_.has(a));
}

TEST_F(SweepTest, TelemetryIsKeptWhileRunningAndReclaimedAfterEndPlusTtl) {
  auto ended = put("ended");
  execution("end", envelope(ended, false));
  clock_->advance(kDay);  // a blob touched after a running execution's last event is kept
  auto running = put("running");
  execution("run", envelope(running, false), /*running=*/true);
  clock_->advance(5 * kDay);
  auto r1 = sweep();
  EXPECT_EQ(r1.keptByReason["running"], 1);
  EXPECT_EQ(r1.keptByReason["ttl"], 1);
  EXPECT_EQ(r1.deleted, 0);
  clock_->advance(2 * kDay);
  auto r2 = sweep();
  EXPECT_EQ(r2.deleted, 1);
  EXPECT_EQ(r2.bytesFreed, 5);
  EXPECT_FALSE(store_.has(ended));
  EXPECT_TRUE(store_.has(running)) << "never while its execution runs, however old";
}

TEST_F(SweepTest, ArchiveAndSnapshotPinsKeepEverythingTheyCite) {
  auto archived = put("archived");
  auto snapped = put("snapped");
  clock_->advance(30 * kDay);
  std::vector<PinSource> pins{
      {"archive", [&](const AddressVisitor& v) { v(archived); }},
      {"snapshot", [&](const AddressVisitor& v) { v(snapped); }}};
  auto r = sweep(pins);
  EXPECT_EQ(r.keptByReason["archive"], 1);
  EXPECT_EQ(r.keptByReason["snapshot"], 1);
  EXPECT_EQ(r.deleted, 0);
}

TEST_F(SweepTest, UncitedBlobsSurviveTheGracePeriodThenGo) {
  auto fresh = put("fresh");
  clock_->advance(30 * 60 * 1000);
  EXPECT_EQ(sweep().keptByReason["grace"], 1);
  clock_->advance(kHour);
  auto r = sweep();
  EXPECT_EQ(r.deleted, 1);
  EXPECT_FALSE(store_.has(fresh));
}

// A store that fails part-way through the deletes (a full disk, a server gone): the sweep
// stops with the store's error, typed as it was, saying how many blobs it deleted and that
// running it again finishes; running it again does.
TEST_F(SweepTest, ASweepThatStopsPartWaySaysHowFarItGot) {
  for (int i = 0; i < 5; ++i) put("uncited " + std::to_string(i));
  clock_->advance(2 * kHour);
  content::FaultyContentStore faulty(store_);
  faulty.failFrom(content::ContentCall::kDeleteIfUntouchedSince, 3);
  SweepOptions o;
  o.ttlMillis = 7 * kDay;
  o.graceMillis = kHour;
  o.clock = clock_;
  try {
    sweepUnpinnedContent(faulty, SweepSources{&logs_, {}}, o);
    FAIL() << "the sweep went on past a failing delete";
  } catch (const UnavailableError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("after deleting 2 of the 5 blobs nothing needs"), std::string::npos)
        << what;
    EXPECT_NE(what.find("run it again to finish"), std::string::npos) << what;
  }
  faulty.failFrom(content::ContentCall::kDeleteIfUntouchedSince, 0);
  EXPECT_EQ(sweep().deleted, 3);
}

TEST_F(SweepTest, ANestedForgedRetainIsTelemetry) {
  auto victim = put("victim");
  execution("forger", json::value{{"page", envelope(victim, true)}});
  clock_->advance(8 * kDay);
  auto r = sweep();
  EXPECT_EQ(r.deleted, 1);
  EXPECT_FALSE(store_.has(victim));
}

// A put of the same bytes lands while the sweep decides: the conditional delete spares it.
class TouchingStore : public content::MemoryContentStore {
 public:
  using MemoryContentStore::MemoryContentStore;
  bool deleteIfUntouchedSince(std::string_view address, int64_t cutoff) override {
    auto bytes = get(address);
    if (bytes) put(*bytes);  // the racing put touches it now
    return MemoryContentStore::deleteIfUntouchedSince(address, cutoff);
  }
};

TEST_F(SweepTest, AConcurrentPutSparesTheBlob) {
  TouchingStore store(clock_);
  auto a = store.put("raced");
  clock_->advance(2 * kHour);
  SweepOptions o;
  o.clock = clock_;
  o.graceMillis = kHour;
  auto r = sweepUnpinnedContent(store, SweepSources{&logs_, {}}, o);
  EXPECT_EQ(r.deleted, 0);
  EXPECT_EQ(r.spared, 1);
  EXPECT_TRUE(store.has(a));
}

TEST_F(SweepTest, DryRunDeletesNothing) {
  auto a = put("old");
  clock_->advance(2 * kHour);
  auto r = sweep({}, /*dryRun=*/true);
  EXPECT_EQ(r.deleted, 1);
  EXPECT_TRUE(r.dryRun);
  EXPECT_TRUE(store_.has(a));
  EXPECT_NE(describe(r).find("would delete: 1"), std::string::npos);
  EXPECT_EQ(toJson(r).at("deleted").as_int64(), 1);
}

class NoConditionalDelete : public content::MemoryContentStore {
 public:
  using MemoryContentStore::MemoryContentStore;
  content::ContentCapabilities capabilities() const override {
    auto c = MemoryContentStore::capabilities();
    c.deleteIfUntouchedSince = false;
    return c;
  }
};

TEST_F(SweepTest, AStoreWithoutConditionalDeleteIsRefused) {
  NoConditionalDelete store(clock_);
  store.put("x");
  clock_->advance(2 * kHour);
  SweepOptions o;
  o.clock = clock_;
  EXPECT_THROW(sweepUnpinnedContent(store, SweepSources{&logs_, {}}, o), FailedPreconditionError);
}

}  // namespace
}  // namespace loom::sweep

#include "loom/kernel/memory_snapshot_store.h"
#include "support/temp_dir.h"
#include "sweep/pin_sources.h"

namespace loom::sweep {
namespace {

TEST_F(SweepTest, SnapshotAndArchiveAdaptersPinWhatTheyCite) {
  auto snapped = put("in a snapshot");
  auto archived = put("in an archive");
  kernel::MemorySnapshotStore snapshots;
  snapshots.put({"s1", 3, json::value{{"steps", {{"x", envelope(snapped, false)}}}}});
  loom::testing::TempDir scratch("pins");
  const auto& dir = scratch.path();
  {
    kernel::MemoryEventStore old;
    old.append("old", 1, {kernel::executionStarted("wf", nullptr, {}, 0),
                          kernel::stepCompleted("s", "flow", "s", envelope(archived, false), 0),
                          kernel::executionCompleted(1, 0)});
    ArchiveWriter writer(dir);
    writer.add(*old.info("old"), old.read("old"));
    writer.finish();
  }
  Archive archive(dir);
  clock_->advance(400 * kDay);
  auto r = sweep({archivePins(archive), snapshotPins(snapshots)});
  EXPECT_EQ(r.keptByReason["archive"], 1);
  EXPECT_EQ(r.keptByReason["snapshot"], 1);
  EXPECT_EQ(r.deleted, 0);
}

}  // namespace
}  // namespace loom::sweep

namespace loom::sweep {
namespace {

// A log store whose scan of one execution meets a sealed event, of another a corrupt row.
class UnreadableLogs : public kernel::MemoryEventStore {
 public:
  void scan(const std::string& id, int64_t from,
            const std::function<void(const kernel::Event&)>& visit) const override {
    if (id == "corrupt") throw CorruptEventError(id, 2, "unknown event type 'STEP_DONE'");
    kernel::MemoryEventStore::scan(id, from, [&](const kernel::Event& e) {
      if (id != "sealed" || e.seq != 2) return visit(e);
      kernel::Event sealed = e;
      sealed.data = json::object{
          {kernel::kSealedKey,
           json::object{
               {"subject", "alice"}, {"keyId", "k1"}, {"nonce", "n"}, {"ciphertext", "c"}}}};
      visit(sealed);
    });
  }
};

class SweepRefusalTest : public ::testing::Test {
 protected:
  void execution(const std::string& id, const std::string& address) {
    logs_.append(
        id, 1,
        {kernel::executionStarted("wf", nullptr, {}, 0),
         kernel::stepCompleted(
             "a#turn:1:tool:0", "tool", "t",
             content::toJson(content::ClaimCheckEnvelope{address, 1, std::nullopt, true}), 0),
         kernel::executionCompleted(1, 0)});
  }
  SweepOptions options() {
    SweepOptions o;
    o.graceMillis = 0;
    o.clock = clock_;
    return o;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'000'000);
  content::MemoryContentStore store_{clock_};
  UnreadableLogs logs_;
};

TEST_F(SweepRefusalTest, D6_HistoryItCannotReadMakesTheSweepDeleteNothingAndNameIt) {
  std::string a = store_.put("sealed blob"), b = store_.put("corrupt blob");
  store_.put("uncited");
  execution("sealed", a);
  execution("corrupt", b);
  execution("fine", store_.put("fine blob"));
  clock_->advance(365LL * 24 * 3600 * 1000);
  try {
    sweepUnpinnedContent(store_, SweepSources{&logs_, {}}, options());
    FAIL() << "the sweep ran on a partial view";
  } catch (const SweepRefusedError& e) {
    ASSERT_EQ(e.unreadable().size(), 2u);
    EXPECT_EQ(e.unreadable()[0].executionId, "corrupt");
    EXPECT_EQ(e.unreadable()[1].executionId, "sealed");
    std::string what = e.what();
    EXPECT_NE(what.find("nothing was deleted"), std::string::npos) << what;
    EXPECT_NE(what.find("security.keys"), std::string::npos) << what;
    EXPECT_EQ(what.find("security.keys"), what.rfind("security.keys"))
        << "how to open sealed runs is said once, not once per run: " << what;
    EXPECT_NE(what.find("sealed (sealed with no keys here under subject"), std::string::npos)
        << what;
    EXPECT_NE(what.find("STEP_DONE"), std::string::npos) << what;
  }
  int blobs = 0;
  store_.forEachBlob([&](const content::BlobInfo&) { ++blobs; });
  EXPECT_EQ(blobs, 4) << "nothing deleted";
}

TEST_F(SweepRefusalTest, D6_ASealedArchiveOrSnapshotReadWithoutKeysIsARefusalToo) {
  PinSource sealedPins{"archive", [](const AddressVisitor&) {
                         throw kernel::SealedEventError("old", 3, "alice",
                                                        kernel::kHowToOpenSealed);
                       }};
  store_.put("pinned by the archive, maybe");
  try {
    sweepUnpinnedContent(store_, SweepSources{&logs_, {sealedPins}}, options());
    FAIL() << "a sealed archive read as citing nothing";
  } catch (const SweepRefusedError& e) {
    ASSERT_EQ(e.unreadable().size(), 1u);
    EXPECT_EQ(e.unreadable()[0].executionId, "old (archive)");
  }
}

TEST_F(SweepRefusalTest, D6_ABlobARunningRunPutIsKeptWhateverTheGrace) {
  kernel::MemoryEventStore logs;
  logs.append("old", 1, {kernel::executionStarted("wf", nullptr, {}, clock_->nowMillis())});
  std::string early = store_.put("put before the run's last event");
  clock_->advance(10'000);
  logs.append("run", 1, {kernel::executionStarted("wf", nullptr, {}, clock_->nowMillis())});
  logs.append("old", 2, {kernel::executionCompleted(1, clock_->nowMillis())});
  clock_->advance(10'000);
  std::string inFlight = store_.put("put by the run, its envelope not journaled yet");
  clock_->advance(3'600'000);
  SweepReport r = sweepUnpinnedContent(store_, SweepSources{&logs, {}}, options());
  EXPECT_TRUE(store_.has(inFlight)) << "grace 0 must not lose a running run's blob";
  EXPECT_EQ(r.keptByReason["running"], 1);
  EXPECT_FALSE(store_.has(early)) << "touched before every running run's last event";
  EXPECT_EQ(r.deleted, 1);
}

}  // namespace
}  // namespace loom::sweep
