// The EventStore conformance suite, part 1: helpers; append, read and scan; validation;
// remove; the control log; copying. Metadata and sizes are in
// event_store_conformance_metadata.cc, concurrency in event_store_conformance_concurrency.cc.
#include "event_store_conformance.h"

#include <unistd.h>

#include <atomic>
#include <random>

#include "loom/util/error.h"

namespace loom::kernel::conformance {

std::string factoryName(const ::testing::TestParamInfo<EventStoreFactory>& info) {
  return info.param.name;
}

Event started(const std::string& workflow, const std::optional<std::string>& subject,
              json::value input, int64_t at) {
  return executionStarted(workflow, std::move(input), subject, at);
}

Event step(const std::string& stepId, json::value output, int64_t at) {
  return stepCompleted(stepId, "tool", "fetch", std::move(output), at);
}

void expectSameEvent(const Event& expected, const Event& actual) {
  EXPECT_EQ(expected.seq, actual.seq);
  EXPECT_EQ(eventTypeName(expected.type), eventTypeName(actual.type));
  EXPECT_EQ(expected.atMillis, actual.atMillis);
  EXPECT_EQ(json::toText(expected.data), json::toText(actual.data)) << "seq " << expected.seq;
}

void expectSameEvents(const std::vector<Event>& expected, const std::vector<Event>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (std::size_t i = 0; i < expected.size(); ++i) expectSameEvent(expected[i], actual[i]);
}

void expectContiguous(const std::vector<Event>& events) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    ASSERT_EQ(static_cast<int64_t>(i) + 1, events[i].seq) << "gap or duplicate at index " << i;
  }
}

namespace {

std::vector<Event> numbered(std::vector<Event> events, int64_t firstSeq = 1) {
  for (auto& e : events) e.seq = firstSeq++;
  return events;
}

ControlEvent control(const std::string& type, const std::string& subject) {
  return ControlEvent{0, type, kT0, json::object{{"subject", subject}}};
}

TEST_P(EventStoreConformance, AppendThenReadRoundTrips) {
  std::vector<Event> events{started("wf", "alice"), step("a", json::object{{"n", 1}}, kT0 + 5),
                            signalReceived("go", json::array{1, "two", nullptr}, kT0 + 9)};
  EXPECT_EQ(4, store().append("e1", 1, events));
  expectSameEvents(numbered(events), store().read("e1"));
}

TEST_P(EventStoreConformance, SeqIsAssignedByPositionAndNextSeqReturned) {
  Event first = started();
  first.seq = 99;  // overwritten by the store
  EXPECT_EQ(2, store().append("e1", 1, {first}));
  EXPECT_EQ(5, store().append("e1", 2, {step("a"), step("b"), step("c")}));
  EXPECT_EQ(6, store().append("e1", 5, {step("d")}));
  auto events = store().read("e1");
  ASSERT_EQ(5u, events.size());
  expectContiguous(events);
  EXPECT_EQ(6, store().info("e1")->nextSeq);
}

TEST_P(EventStoreConformance, StaleExpectedNextSeqConflictsAndWritesNothing) {
  store().append("e1", 1, {started(), step("a")});
  EXPECT_THROW(store().append("e1", 2, {step("b")}), ConflictError);
  EXPECT_THROW(store().append("e1", 4, {step("b")}), ConflictError);
  EXPECT_THROW(store().append("e1", 0, {step("b")}), ConflictError);
  EXPECT_EQ(2u, store().read("e1").size());
  EXPECT_EQ(3, store().info("e1")->nextSeq);
  EXPECT_THROW(store().append("unknown", 2, {step("b")}), ConflictError);
  EXPECT_FALSE(store().info("unknown"));
}

TEST_P(EventStoreConformance, StartingAnExistingExecutionConflicts) {
  store().append("e1", 1, {started("first")});
  EXPECT_THROW(store().append("e1", 1, {started("second")}), ConflictError);
  EXPECT_EQ("first", store().info("e1")->workflow);
  EXPECT_EQ(1u, store().read("e1").size());
}

TEST_P(EventStoreConformance, FirstEventMustBeExecutionStarted) {
  EXPECT_THROW(store().append("e1", 1, {step("a")}), InvalidArgumentError);
  EXPECT_FALSE(store().info("e1"));
  EXPECT_TRUE(store().read("e1").empty());
  EXPECT_TRUE(store().list({}).empty());
}

TEST_P(EventStoreConformance, ExecutionStartedLaterInTheLogIsRejected) {
  store().append("e1", 1, {started()});
  EXPECT_THROW(store().append("e1", 2, {step("a"), started()}), InvalidArgumentError);
  EXPECT_EQ(1u, store().read("e1").size());
}

TEST_P(EventStoreConformance, InvalidEventDataIsRejectedWritingNothing) {
  Event noOutput = step("b");
  noOutput.data.erase("output");
  EXPECT_THROW(store().append("e1", 1, {started(), noOutput}), InvalidArgumentError);
  EXPECT_FALSE(store().info("e1"));
  Event numericSubject = started();
  numericSubject.data["subject"] = 5;
  EXPECT_THROW(store().append("e1", 1, {numericSubject}), InvalidArgumentError);
  EXPECT_FALSE(store().info("e1"));

  store().append("e1", 1, {started()});
  auto before = store().info("e1");
  Event wrongKind = step("c");
  wrongKind.data["stepId"] = 7;
  Event reserved = step("d");
  reserved.data["seq"] = 3;
  for (const Event& bad : {noOutput, wrongKind, reserved}) {
    EXPECT_THROW(store().append("e1", 2, {step("a"), bad}), InvalidArgumentError);
  }
  EXPECT_EQ(1u, store().read("e1").size());
  EXPECT_EQ(before->logBytes, store().info("e1")->logBytes);
  EXPECT_EQ(before->nextSeq, store().info("e1")->nextSeq);
}

TEST_P(EventStoreConformance, EmptyBatchAndEmptyIdAreRejected) {
  EXPECT_THROW(store().append("e1", 1, {}), InvalidArgumentError);
  EXPECT_THROW(store().append("", 1, {started()}), InvalidArgumentError);
  EXPECT_TRUE(store().list({}).empty());
}

TEST_P(EventStoreConformance, BatchedAppendIsAtomic) {
  std::vector<Event> batch{started()};
  for (int i = 0; i < 100; ++i) batch.push_back(step("s" + std::to_string(i)));
  EXPECT_EQ(102, store().append("e1", 1, batch));
  auto events = store().read("e1");
  ASSERT_EQ(101u, events.size());
  expectContiguous(events);

  std::vector<Event> bad;
  for (int i = 0; i < 50; ++i) bad.push_back(step("t" + std::to_string(i)));
  bad.push_back(Event{0, EventType::kExecutionFailed, kT0, json::object{}});  // no error
  EXPECT_THROW(store().append("e1", 102, bad), InvalidArgumentError);
  EXPECT_EQ(101u, store().read("e1").size());
  EXPECT_EQ(100, store().info("e1")->steps);
}

TEST_P(EventStoreConformance, ScanStartsAtFromSeqAndStreamsInOrder) {
  store().append("e1", 1, {started(), step("a"), step("b"), step("c"), step("d")});
  std::vector<int64_t> seen;
  store().scan("e1", 3, [&](const Event& e) { seen.push_back(e.seq); });
  EXPECT_EQ((std::vector<int64_t>{3, 4, 5}), seen);
  EXPECT_EQ(5u, store().read("e1", 0).size());
  EXPECT_EQ(5u, store().read("e1", -7).size());
  EXPECT_EQ(1u, store().read("e1", 5).size());
  EXPECT_TRUE(store().read("e1", 6).empty());
  bool visited = false;
  store().scan("unknown", 1, [&](const Event&) { visited = true; });
  EXPECT_FALSE(visited);
}

TEST_P(EventStoreConformance, ScanVisitorMayCallBackIntoTheStore) {
  store().append("e1", 1, {started(), step("a"), step("b")});
  store().append("e2", 1, {started()});
  int64_t next = 2;
  store().scan("e1", 1, [&](const Event& e) {
    EXPECT_TRUE(store().info("e1"));
    EXPECT_FALSE(store().read("e2").empty());
    next = store().append("e2", next, {step("copy" + std::to_string(e.seq))});
  });
  EXPECT_EQ(4u, store().read("e2").size());
}

TEST_P(EventStoreConformance, ScanVisitorExceptionPropagatesAndLeavesTheStoreUsable) {
  store().append("e1", 1, {started(), step("a"), step("b")});
  for (int i = 0; i < 10; ++i) {  // more than any pool of read connections
    int visits = 0;
    EXPECT_THROW(store().scan("e1", 1,
                              [&](const Event&) {
                                if (++visits == 2) throw std::runtime_error("visitor stops");
                              }),
                 std::runtime_error);
  }
  EXPECT_EQ(5, store().append("e1", 4, {step("c")}));
  EXPECT_EQ(4u, store().read("e1").size());
}

TEST_P(EventStoreConformance, LargeEventRoundTrips) {
  std::string big(1 << 20, 'x');
  big[12345] = 'y';
  store().append("e1", 1, {started(), step("big", json::value(big))});
  auto events = store().read("e1", 2);
  ASSERT_EQ(1u, events.size());
  EXPECT_EQ(big, events[0].data.at("output").get_string());
}

TEST_P(EventStoreConformance, ValuesAreCopiedInAndOut) {
  std::vector<Event> mine{started("wf", std::nullopt, json::object{{"k", "v"}}),
                          step("a", json::array{1, 2})};
  store().append("e1", 1, mine);
  mine[0].data["input"].get_object()["k"] = "changed";
  mine[1].data["output"].get_array().push_back(3);

  auto read = store().read("e1");
  read[0].data["workflow"] = "mutated";
  read[1].data["output"].get_array().clear();
  // scan's visitor sees a const reference valid during the call (never to be cast away).
  store().scan("e1", 1, [](const Event& e) { Event copy = e; copy.data.clear(); });

  auto again = store().read("e1");
  ASSERT_EQ(2u, again.size());
  EXPECT_EQ("wf", again[0].data.at("workflow").get_string());
  EXPECT_EQ("v", again[0].data.at("input").at("k").get_string());
  EXPECT_EQ(2u, again[1].data.at("output").get_array().size());

  auto info = store().info("e1");
  info->workflow = "mutated";
  EXPECT_EQ("wf", store().info("e1")->workflow);
}

TEST_P(EventStoreConformance, RemoveDeletesLogAndMetadataOnce) {
  EXPECT_FALSE(store().remove("e1"));
  store().append("e1", 1, {started(), step("a")});
  store().append("e2", 1, {started()});
  EXPECT_TRUE(store().remove("e1"));
  EXPECT_FALSE(store().info("e1"));
  EXPECT_TRUE(store().read("e1").empty());
  EXPECT_FALSE(store().remove("e1"));
  ASSERT_EQ(1u, store().list({}).size());
  EXPECT_EQ("e2", store().list({})[0].id);
  EXPECT_EQ(1u, store().read("e2").size());
  // The id is free again.
  EXPECT_EQ(2, store().append("e1", 1, {started("again")}));
  EXPECT_EQ("again", store().info("e1")->workflow);
}

TEST_P(EventStoreConformance, ControlLogAppendsReadsAndConflicts) {
  EXPECT_TRUE(store().readControl().empty());
  EXPECT_EQ(2, store().appendControl(1, {control("ERASURE_CONTENT_DELETE_INTENDED", "alice")}));
  EXPECT_THROW(store().appendControl(1, {control("SUBJECT_SHREDDED", "bob")}), ConflictError);
  EXPECT_THROW(store().appendControl(3, {control("SUBJECT_SHREDDED", "bob")}), ConflictError);
  EXPECT_EQ(4, store().appendControl(2, {control("ERASURE_CONTENT_DELETED", "alice"),
                                         control("SUBJECT_SHREDDED", "alice")}));
  auto all = store().readControl();
  ASSERT_EQ(3u, all.size());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(i + 1, all[i].seq);
  EXPECT_EQ("ERASURE_CONTENT_DELETE_INTENDED", all[0].type);
  EXPECT_EQ("SUBJECT_SHREDDED", all[2].type);
  EXPECT_EQ("alice", all[2].data.at("subject").get_string());
  EXPECT_EQ(kT0, all[2].atMillis);
  auto tail = store().readControl(3);
  ASSERT_EQ(1u, tail.size());
  EXPECT_EQ(3, tail[0].seq);
  EXPECT_TRUE(store().readControl(4).empty());
}

// The end of the log and the events of chosen types, as the sweep, erasure and every run
// listing read them: the same events readControl holds, in order.
TEST_P(EventStoreConformance, ControlLogEndAndEventsOfTypes) {
  EXPECT_EQ(0, store().lastControlSeq());
  EXPECT_TRUE(store().readControlOfTypes({"SUBJECT_SHREDDED"}).empty());
  store().appendControl(1, {control("BLOB_READ", "a"), control("SUBJECT_SHREDDED", "alice"),
                            control("BLOB_READ", "b"), control("RETENTION_RUN", "x"),
                            control("SUBJECT_SHREDDED", "bob")});
  EXPECT_EQ(5, store().lastControlSeq());
  auto shreds = store().readControlOfTypes({"SUBJECT_SHREDDED"});
  ASSERT_EQ(2u, shreds.size());
  EXPECT_EQ(2, shreds[0].seq);
  EXPECT_EQ("bob", shreds[1].data.at("subject").get_string());
  auto two = store().readControlOfTypes({"RETENTION_RUN", "SUBJECT_SHREDDED"}, 3);
  ASSERT_EQ(2u, two.size());
  EXPECT_EQ(4, two[0].seq);
  EXPECT_EQ("RETENTION_RUN", two[0].type);
  EXPECT_EQ(5, two[1].seq);
  EXPECT_TRUE(store().readControlOfTypes({"RETENTION_ARCHIVED"}).empty());
  EXPECT_EQ(6, kernel::appendControlAtEnd(store(), control("BLOB_READ", "c")));
  EXPECT_EQ(6, store().lastControlSeq());
}

TEST_P(EventStoreConformance, ControlLogRefusesUnknownTypesAndEmptyBatches) {
  EXPECT_THROW(store().appendControl(1, {control("RETENTION_RUN", "x"), control("NOPE", "x")}),
               InvalidArgumentError);
  EXPECT_THROW(store().appendControl(1, {}), InvalidArgumentError);
  EXPECT_TRUE(store().readControl().empty());
  EXPECT_EQ(2, store().appendControl(1, {control("RETENTION_RUN", "x")}));
}

TEST_P(EventStoreConformance, ControlLogIsApartFromExecutions) {
  store().appendControl(1, {control("RETENTION_RUN", "x")});
  EXPECT_TRUE(store().list({}).empty());
  store().append("e1", 1, {started()});
  EXPECT_TRUE(store().remove("e1"));
  EXPECT_EQ(1u, store().readControl().size());
}

}  // namespace
}  // namespace loom::kernel::conformance
