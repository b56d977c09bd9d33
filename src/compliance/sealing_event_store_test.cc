// SealingEventStore over the SQLite event store: round trips, what is stored (ciphertext, the
// clear metadata of EXECUTION_STARTED), rows that cannot be swapped, erased markers after a
// shred, metadata that keeps working, and the kernel's sealed/erased shapes.
#include "compliance/sealing_event_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "loom/compliance/memory_key_store.h"
#include "loom/compliance/sqlite_key_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/util/error.h"
#include "sealing_test_util.h"

namespace loom::compliance {
namespace {

using namespace sealing_test;
using kernel::Event;
using kernel::EventType;

class SealingEventStoreTest : public ::testing::Test {
 protected:
  void open(SealingOptions options = {}) {
    sealed_.reset();
    sealed_ = std::make_unique<SealingEventStore>(inner_, keys_, options);
  }
  void SetUp() override { open(); }

  std::string dbPath() const { return (home_.path() / "loom.db").string(); }
  // The stored body of one row, read past both stores.
  std::string rawBody(const std::string& id, int64_t seq) {
    sqlite3* h = nullptr;
    sqlite3_open(dbPath().c_str(), &h);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(h, "SELECT body FROM events WHERE execution_id = ?1 AND seq = ?2", -1, &stmt,
                       nullptr);
    sqlite3_bind_text(stmt, 1, id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(stmt, 2, seq);
    std::string body;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      body = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    sqlite3_close(h);
    return body;
  }
  void exec(const std::string& sql) {
    sqlite3* h = nullptr;
    sqlite3_open(dbPath().c_str(), &h);
    char* error = nullptr;
    EXPECT_EQ(SQLITE_OK, sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &error)) << error;
    sqlite3_free(error);
    sqlite3_close(h);
  }

  ScratchHome home_;
  SqliteKeyStore keys_{
      SqliteKeyStoreOptions{(home_.path() / "loom.db").string(), testMasterKey(), "the test key"}};
  kernel::SqliteEventStore inner_{kernel::SqliteEventStoreOptions{dbPath()}};
  std::unique_ptr<SealingEventStore> sealed_;
};

TEST_F(SealingEventStoreTest, EventsRoundTripThroughTheSealWhileTheStoreHoldsCiphertext) {
  std::vector<Event> events = secretRun("alice", "ALICE-SECRET", 3);
  sealed_->append("e1", 1, events);
  std::vector<Event> read = sealed_->read("e1");
  ASSERT_EQ(events.size(), read.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(static_cast<int64_t>(i + 1), read[i].seq);
    EXPECT_EQ(events[i].type, read[i].type);
    EXPECT_EQ(events[i].atMillis, read[i].atMillis);
    EXPECT_EQ(json::value(events[i].data), json::value(read[i].data)) << i;
  }
  for (const Event& stored : inner_.read("e1")) {
    EXPECT_TRUE(kernel::isSealed(stored.data)) << stored.seq;
    EXPECT_EQ(std::string::npos, json::toText(json::value(stored.data)).find("ALICE-SECRET"));
    EXPECT_EQ("alice", stored.data.at("sealed").at("subject").as_string());
  }
  Event started = inner_.read("e1").front();
  EXPECT_EQ("wf", started.data.at("workflow").as_string()) << "kept in clear for metadata";
  EXPECT_EQ("alice", started.data.at("subject").as_string());
  EXPECT_EQ(3u, started.data.size());
  EXPECT_EQ(1u, inner_.read("e1")[1].data.size()) << "step ids are sealed too";
}

TEST_F(SealingEventStoreTest, LaterAppendsAreSealedUnderTheSubjectFromTheMetadata) {
  std::vector<Event> events = secretRun("alice", "S1", 1, false);
  sealed_->append("e1", 1, events);
  sealed_->append("e1", 3, {kernel::signalReceived("approve", json::object{{"by", "S2"}}, kT0)});
  sealed_->append("e1", 4, {kernel::executionCompleted("S3", kT0 + 5)});
  for (const Event& stored : inner_.read("e1")) EXPECT_TRUE(kernel::isSealed(stored.data));
  std::vector<Event> read = sealed_->read("e1");
  ASSERT_EQ(4u, read.size());
  EXPECT_EQ("S2", read[2].data.at("payload").at("by").as_string());
  EXPECT_EQ("S3", read[3].data.at("output").as_string());
  EXPECT_EQ(2u, sealed_->read("e1", 3).size());
}

TEST_F(SealingEventStoreTest, AnotherWriterLearnsTheSubjectFromTheMetadata) {
  sealed_->append("e1", 1, secretRun("alice", "S1", 1, false));
  SealingEventStore other(inner_, keys_);  // another process: nothing remembered
  other.append("e1", 3, {kernel::signalReceived("approve", json::value("S2"), kT0)});
  Event stored = inner_.read("e1", 3).front();
  ASSERT_TRUE(kernel::isSealed(stored.data));
  EXPECT_EQ("alice", stored.data.at("sealed").at("subject").as_string());
  // The first writer, now behind, learns the new end from a conflict and seals as before.
  EXPECT_THROW(sealed_->append("e1", 3, {kernel::executionCompleted(1, kT0)}), ConflictError);
  sealed_->append("e1", 4, {kernel::executionCompleted(1, kT0)});
  EXPECT_EQ(json::value("S2"), sealed_->read("e1")[2].data.at("payload"));
}

TEST_F(SealingEventStoreTest, AShredDuringARunRefusesItsLaterEventsButNotANewExecution) {
  sealed_->append("run", 1, secretRun("alice", "BEFORE", 1, false));
  ASSERT_TRUE(keys_.shred("alice"));
  EXPECT_THROW(
      sealed_->append("run", 3, {kernel::signalReceived("late", json::value("AFTER"), kT0)}),
      FailedPreconditionError)
      << "the run under way records nothing more";
  open(SealingOptions{});  // another process: nothing remembered
  EXPECT_THROW(
      sealed_->append("run", 3, {kernel::signalReceived("late", json::value("AFTER"), kT0)}),
      FailedPreconditionError);
  ASSERT_EQ(2u, sealed_->read("run").size());
  for (const Event& e : sealed_->read("run")) EXPECT_TRUE(kernel::isErased(e.data)) << e.seq;
  sealed_->append("new", 1, secretRun("alice", "NEW", 1));
  EXPECT_EQ("input NEW", sealed_->read("new").front().data.at("input").at("q").as_string());
}

TEST_F(SealingEventStoreTest, WithoutASubjectEventsStayClearUnlessSecurityCryptoSealsThem) {
  sealed_->append("none", 1,
                  {kernel::executionStarted("wf", json::value("NOSUBJECT-1"), std::nullopt, kT0)});
  EXPECT_FALSE(kernel::isSealed(inner_.read("none").front().data));
  open(SealingOptions{.sealSubjectless = true});
  sealed_->append("crypto", 1,
                  {kernel::executionStarted("wf", json::value("NOSUBJECT-2"), std::nullopt, kT0)});
  Event stored = inner_.read("crypto").front();
  ASSERT_TRUE(kernel::isSealed(stored.data));
  EXPECT_EQ(kSystemSubject, stored.data.at("sealed").at("subject").as_string());
  EXPECT_FALSE(stored.data.contains("subject"));
  EXPECT_EQ("NOSUBJECT-2", sealed_->read("crypto").front().data.at("input").as_string());
}

TEST_F(SealingEventStoreTest, MetadataCountsStoredBytesAndStepsOfSealedEvents) {
  sealed_->append("e1", 1, secretRun("alice", "M", 4));
  std::optional<kernel::ExecutionInfo> info = sealed_->info("e1");
  ASSERT_TRUE(info);
  EXPECT_EQ("wf", info->workflow);
  EXPECT_EQ("alice", info->subject);
  EXPECT_EQ(kernel::ExecutionStatus::kCompleted, info->status);
  EXPECT_EQ(4, info->steps);
  EXPECT_EQ(7, info->nextSeq);
  int64_t stored = 0;
  for (const Event& e : inner_.read("e1")) stored += static_cast<int64_t>(kernel::toText(e).size());
  EXPECT_EQ(stored, info->logBytes);
  EXPECT_GT(info->stateBytes, 0);
  kernel::ExecutionFilter bySubject;
  bySubject.subject = "alice";
  ASSERT_EQ(1u, sealed_->list(bySubject).size());
}

TEST_F(SealingEventStoreTest, SwappedRowsDoNotOpen) {
  sealed_->append("e1", 1, secretRun("alice", "A", 3));
  sealed_->append("e2", 1, secretRun("alice", "B", 3));
  // Swap the sealed payloads of two steps of one execution, keeping each row's seq.
  std::string two = rawBody("e1", 2), three = rawBody("e1", 3);
  auto payload = [](const std::string& body) { return body.substr(body.find(",\"sealed\"")); };
  auto head = [](const std::string& body) { return body.substr(0, body.find(",\"sealed\"")); };
  exec("UPDATE events SET body = '" + head(two) + payload(three) +
       "', checksum = NULL WHERE execution_id = 'e1' AND seq = 2");
  exec("UPDATE events SET body = '" + head(three) + payload(two) +
       "', checksum = NULL WHERE execution_id = 'e1' AND seq = 3");
  try {
    sealed_->read("e1");
    FAIL() << "a swapped row opened";
  } catch (const CorruptEventError& e) {
    EXPECT_EQ("e1", e.executionId());
    EXPECT_EQ(2, e.seq());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("does not authenticate"));
  }
  // A row moved to another execution at the same seq does not open either.
  exec("UPDATE events SET body = '" + rawBody("e1", 4) +
       "', checksum = NULL WHERE execution_id = 'e2' AND seq = 4");
  EXPECT_THROW(sealed_->read("e2"), CorruptEventError);
  // Nor does a flipped byte of ciphertext.
  std::string five = rawBody("e2", 5);
  std::size_t at = five.find("\"ciphertext\":\"") + 14;
  five[at] = five[at] == 'A' ? 'B' : 'A';
  exec("UPDATE events SET body = '" + five +
       "', checksum = NULL WHERE execution_id = 'e2' AND seq = 5");
  EXPECT_THROW(sealed_->scan("e2", 5, [](const Event&) {}), CorruptEventError);
}

TEST_F(SealingEventStoreTest, AKeyThatNeverExistedIsCorruptionNotErasure) {
  sealed_->append("e1", 1, secretRun("alice", "K", 1));
  std::string body = rawBody("e1", 2);
  std::size_t at = body.find("\"keyId\":\"") + 9;
  body[at] = body[at] == 'a' ? 'b' : 'a';
  exec("UPDATE events SET body = '" + body +
       "', checksum = NULL WHERE execution_id = 'e1' AND seq = 2");
  try {
    sealed_->read("e1");
    FAIL() << "a damaged key id read as erased";
  } catch (const CorruptEventError& e) {
    EXPECT_EQ(2, e.seq());
    EXPECT_NE(std::string::npos, std::string(e.what()).find("neither has nor shredded"));
  }
  // A log opened with another (empty) key store fails the same way, instead of reading as
  // erased.
  MemoryKeyStore empty;
  SealingEventStore wrongKeys(inner_, empty);
  EXPECT_THROW(wrongKeys.read("e1", 3), CorruptEventError);
}

TEST_F(SealingEventStoreTest, ChangingTheClearWorkflowOfAStartIsDetected) {
  sealed_->append("e1", 1, secretRun("alice", "W", 0, false));
  std::string body = rawBody("e1", 1);
  std::size_t at = body.find("\"workflow\":\"wf\"");
  ASSERT_NE(std::string::npos, at);
  body.replace(at, 15, "\"workflow\":\"xx\"");
  exec("UPDATE events SET body = '" + body +
       "', checksum = NULL WHERE execution_id = 'e1' AND seq = 1");
  EXPECT_THROW(sealed_->read("e1"), CorruptEventError);
}

// The code version stays clear (a worker claims by it without keys) and is bound to the
// payload: changed or removed, the start no longer opens (EVENT_SCHEMA 3).
TEST_F(SealingEventStoreTest, TheCodeVersionOfAStartStaysClearAndCannotBeChanged) {
  std::vector<Event> run = secretRun("alice", "W", 0, false);
  run[0].data["codeVersion"] = "v1";
  sealed_->append("e1", 1, run);
  EXPECT_EQ(inner_.info("e1")->codeVersion, "v1") << "the stored metadata holds it";
  EXPECT_EQ(sealed_->read("e1")[0].data.at("codeVersion"), "v1");
  const std::string body = rawBody("e1", 1);
  ASSERT_NE(body.find("\"codeVersion\":\"v1\""), std::string::npos) << body;
  for (const std::string& changed : {std::string("\"codeVersion\":\"v2\""), std::string()}) {
    std::string altered = body;
    std::size_t at = altered.find("\"codeVersion\":\"v1\"");
    altered.replace(at, 18 + (changed.empty() ? 1 : 0), changed);
    exec("UPDATE events SET body = '" + altered +
         "', checksum = NULL WHERE execution_id = 'e1' AND seq = 1");
    EXPECT_THROW(sealed_->read("e1"), CorruptEventError) << altered;
  }
}

// An upgrade's version stays clear too (EVENT_SCHEMA 4), bound likewise; after a shred the
// upgrade reads as erased and still names the version the run is on.
TEST_F(SealingEventStoreTest, AnUpgradesCodeVersionStaysClearBoundAndSurvivesAShred) {
  std::vector<Event> run = secretRun("alice", "W", 0, false);
  run[0].data["codeVersion"] = "v1";
  sealed_->append("e1", 1, run);
  const int64_t seq = sealed_->info("e1")->nextSeq;
  sealed_->append("e1", seq, {kernel::codeUpgraded("v2", std::string("v1"), 5)});
  EXPECT_EQ(inner_.info("e1")->codeVersion, "v2");
  Event read = sealed_->read("e1").back();
  EXPECT_EQ(read.data.at("codeVersion"), "v2");
  EXPECT_EQ(read.data.at("from"), "v1") << "the rest is sealed and opens";
  const std::string body = rawBody("e1", seq);
  ASSERT_NE(body.find("\"codeVersion\":\"v2\""), std::string::npos) << body;
  EXPECT_EQ(body.find("\"from\""), std::string::npos) << "only the version is clear: " << body;
  std::string altered = body;
  altered.replace(altered.find("\"codeVersion\":\"v2\""), 18, "\"codeVersion\":\"v9\"");
  exec("UPDATE events SET body = '" + altered + "', checksum = NULL WHERE execution_id = 'e1' "
       "AND seq = " + std::to_string(seq));
  EXPECT_THROW(sealed_->read("e1"), CorruptEventError) << altered;
  exec("UPDATE events SET body = '" + body + "', checksum = NULL WHERE execution_id = 'e1' "
       "AND seq = " + std::to_string(seq));
  ASSERT_TRUE(keys_.shred("alice"));
  Event erased = sealed_->read("e1").back();
  EXPECT_TRUE(kernel::isErased(erased.data));
  EXPECT_EQ(erased.data.at("codeVersion"), "v2");
  EXPECT_NO_THROW(kernel::validateEventData(erased.type, erased.data));
}

// A model step's usage stays clear (totals and budgets need no keys, EVENT_SCHEMA 5) and is
// bound to the payload: changed, the step no longer opens.
TEST_F(SealingEventStoreTest, AModelStepsUsageStaysClearAndCannotBeChanged) {
  sealed_->append("e1", 1, secretRun("alice", "W", 0, false));
  Event model = kernel::stepCompleted("a#turn:1:model", "llm", "m", json::value("SECRET"), 2);
  model.data["usage"] =
      json::object{{"model", "m"}, {"inputTokens", 10}, {"outputTokens", 4}, {"costUsd", 0.5}};
  const int64_t seq = sealed_->info("e1")->nextSeq;
  sealed_->append("e1", seq, {model});
  EXPECT_EQ(inner_.info("e1")->usage, (kernel::TokenUsage{10, 4, 0, 500'000'000, 1}));
  const std::string body = rawBody("e1", seq);
  EXPECT_EQ(body.find("SECRET"), std::string::npos) << body;
  ASSERT_NE(body.find("\"inputTokens\":10"), std::string::npos) << body;
  EXPECT_EQ(sealed_->read("e1").back().data.at("output"), "SECRET");
  std::string altered = body;
  altered.replace(altered.find("\"inputTokens\":10"), 16, "\"inputTokens\":1");
  exec("UPDATE events SET body = '" + altered + "', checksum = NULL WHERE execution_id = 'e1' "
       "AND seq = " + std::to_string(seq));
  EXPECT_THROW(sealed_->read("e1"), CorruptEventError) << altered;
}

TEST_F(SealingEventStoreTest, AfterAShredEventsReadAsErasedNamingTheSubject) {
  sealed_->append("a1", 1, secretRun("alice", "ALICE", 2));
  sealed_->append("b1", 1, secretRun("bob", "BOB", 2));
  ASSERT_TRUE(keys_.shred("alice"));
  std::vector<Event> erased = sealed_->read("a1");
  ASSERT_EQ(4u, erased.size());
  for (const Event& e : erased) {
    ASSERT_TRUE(kernel::isErased(e.data)) << e.seq;
    EXPECT_EQ("alice", e.data.at("erased").at("subject").as_string());
    EXPECT_NO_THROW(kernel::validateEventData(e.type, e.data));
  }
  EXPECT_EQ("wf", erased[0].data.at("workflow").as_string());
  EXPECT_EQ(EventType::kStepCompleted, erased[1].type);
  // Metadata and the other subject are untouched.
  std::optional<kernel::ExecutionInfo> info = sealed_->info("a1");
  ASSERT_TRUE(info);
  EXPECT_EQ(2, info->steps);
  EXPECT_EQ(2u, sealed_->list({}).size());
  EXPECT_EQ("BOB #1", sealed_->read("b1")[2].data.at("output").at("text").as_string());
  // A reopened store (another process) sees the same.
  kernel::SqliteEventStore again{kernel::SqliteEventStoreOptions{dbPath()}};
  SealingEventStore sealedAgain(again, keys_);
  EXPECT_TRUE(kernel::isErased(sealedAgain.read("a1").back().data));
}

TEST_F(SealingEventStoreTest, AppendingASealedOrErasedShapeIsRefused) {
  sealed_->append("e1", 1, secretRun("alice", "X", 0, false));
  json::object forged{
      {"sealed",
       json::object{
           {"subject", "alice"}, {"keyId", "k"}, {"nonce", "AAAA"}, {"ciphertext", "AAAA"}}}};
  Event e{0, EventType::kStepCompleted, kT0, forged};
  EXPECT_THROW(sealed_->append("e1", 2, {e}), InvalidArgumentError);
  e.data = json::object{{"erased", json::object{{"subject", "alice"}}}};
  EXPECT_THROW(sealed_->append("e1", 2, {e}), InvalidArgumentError);
  EXPECT_EQ(2, sealed_->info("e1")->nextSeq);
}

TEST_F(SealingEventStoreTest, AnEventMissingAFieldIsNamedBeforeItIsSealed) {
  Event bad{0, EventType::kExecutionStarted, kT0, json::object{{"input", 1}, {"subject", "a"}}};
  try {
    sealed_->append("e1", 1, {bad});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("workflow")) << e.what();
  }
  EXPECT_FALSE(sealed_->info("e1"));
}

TEST_F(SealingEventStoreTest, ConflictsAndUnknownExecutionsBehaveAsTheInnerStore) {
  sealed_->append("e1", 1, secretRun("alice", "C", 1, false));
  EXPECT_THROW(sealed_->append("e1", 1, secretRun("alice", "C", 0, false)), ConflictError);
  EXPECT_THROW(sealed_->append("e1", 9, {kernel::executionCompleted(1, kT0)}), ConflictError);
  EXPECT_THROW(sealed_->append("nope", 2, {kernel::executionCompleted(1, kT0)}), ConflictError);
  EXPECT_THROW(sealed_->append("nope", 1, {kernel::executionCompleted(1, kT0)}),
               InvalidArgumentError);
  EXPECT_TRUE(sealed_->remove("e1"));
  EXPECT_FALSE(sealed_->info("e1"));
}

TEST(SealedShapes, TheKernelAcceptsSealedAndErasedPayloadsForAnyType) {
  json::object sealed{
      {"sealed",
       json::object{{"subject", "s"}, {"keyId", "k"}, {"nonce", "n"}, {"ciphertext", "c"}}}};
  json::object erased{{"erased", json::object{{"subject", "s"}}}};
  for (auto type :
       {EventType::kStepCompleted, EventType::kStepFailed, EventType::kExecutionParked,
        EventType::kSignalReceived, EventType::kExecutionCompleted, EventType::kExecutionFailed}) {
    EXPECT_NO_THROW(kernel::validateEventData(type, sealed));
    EXPECT_NO_THROW(kernel::validateEventData(type, erased));
    json::object extra = sealed;
    extra["workflow"] = "wf";
    EXPECT_THROW(kernel::validateEventData(type, extra), InvalidArgumentError);
  }
  json::object start = sealed;
  start["workflow"] = "wf";
  start["subject"] = "s";
  EXPECT_TRUE(kernel::isSealed(start));
  EXPECT_NO_THROW(kernel::validateEventData(EventType::kExecutionStarted, start));
  start.erase("workflow");
  EXPECT_THROW(kernel::validateEventData(EventType::kExecutionStarted, start),
               InvalidArgumentError);
  json::object noKey{{"sealed", json::object{{"subject", "s"}, {"nonce", "n"}}}};
  EXPECT_THROW(kernel::validateEventData(EventType::kStepCompleted, noKey), InvalidArgumentError);
  json::object stepWithSealedMember{{"stepId", "a"},
                                    {"taskKind", "t"},
                                    {"effectId", "e"},
                                    {"output", 1},
                                    {"sealed", json::object{}}};
  EXPECT_FALSE(kernel::isSealed(stepWithSealedMember)) << "a clear step is not sealed by shape";
  // A stored sealed row parses (eventFromText validates), and metadata does not read its fields.
  Event e =
      kernel::eventFromText("x", 2,
                            R"({"seq":2,"type":"STEP_COMPLETED","at":"2026-01-01T00:00:00.000Z",)" +
                                json::toText(json::value(sealed)).substr(1));
  kernel::ExecutionInfo info;
  info.id = "x";
  kernel::applyEvent(info, kernel::executionStarted("wf", nullptr, "s", kT0), 10);
  kernel::applyEvent(info, e, 100);
  EXPECT_EQ(1, info.steps);
  EXPECT_EQ(110, info.logBytes);
}

}  // namespace
}  // namespace loom::compliance
