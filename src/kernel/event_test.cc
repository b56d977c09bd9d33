#include "loom/kernel/event.h"

#include <gtest/gtest.h>

#include <thread>

#include "loom/kernel/fold.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"

namespace loom::kernel {
namespace {

TEST(EventTest, TextRoundTripKeepsEveryField) {
  Event e =
      stepCompleted("s#turn:1:tool:0", "tool", "fetch", json::value{{"k", "v"}}, 1780000000123);
  e.seq = 7;
  std::string text = toText(e);
  EXPECT_EQ(text.rfind(R"({"seq":7,"type":"STEP_COMPLETED","at":")", 0), 0u) << text;
  Event back = eventFromText("x", 7, text);
  EXPECT_EQ(back.type, EventType::kStepCompleted);
  EXPECT_EQ(back.atMillis, 1780000000123);
  EXPECT_EQ(back.data, e.data);
}

void expectCorrupt(std::string_view text, std::string_view fragment) {
  try {
    eventFromText("exec-9", 3, text);
    FAIL() << "expected CorruptEventError for " << text;
  } catch (const CorruptEventError& e) {
    EXPECT_EQ(e.executionId(), "exec-9");
    EXPECT_EQ(e.seq(), 3);
    EXPECT_EQ(e.code(), ErrorCode::kDataLoss);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("exec-9"), std::string::npos);
  }
}

TEST(EventTest, DefectsAreCorruptEventErrorsNamingExecutionAndSeq) {
  expectCorrupt("{not json", "not valid JSON");
  expectCorrupt("[1,2]", "not a JSON object");
  expectCorrupt(R"({"seq":3,"type":"STEP_EXPLODED","at":"2026-01-01T00:00:00.000Z"})",
                "unknown event type 'STEP_EXPLODED'");
  expectCorrupt(
      R"({"seq":4,"type":"EXECUTION_COMPLETED","at":"2026-01-01T00:00:00.000Z","output":1})",
      "seq field says 4");
  expectCorrupt(
      R"({"seq":3,"type":"STEP_COMPLETED","at":"2026-01-01T00:00:00.000Z","stepId":"a","taskKind":"flow","effectId":"a"})",
      "missing field 'output'");
  expectCorrupt(
      R"({"seq":3,"type":"STEP_COMPLETED","at":"2026-01-01T00:00:00.000Z","stepId":5,"taskKind":"flow","effectId":"a","output":1})",
      "field 'stepId' must be a string");
  expectCorrupt(R"({"seq":3,"type":"EXECUTION_COMPLETED","at":"yesterday","output":1})",
                "not an RFC 3339");
}

TEST(EventTest, AStepsNumbersAreRangeChecked) {
  const std::string head =
      R"({"seq":3,"type":"STEP_COMPLETED","at":"2026-01-01T00:00:00.000Z","stepId":"a",)"
      R"("taskKind":"flow","effectId":"a","output":1,)";
  // The fuzzer's row: a 111-digit durationMs read as a double that did not survive a write.
  expectCorrupt(head + R"("durationMs":)" + std::string(111, '7') + "}",
                "field 'durationMs' must be an integer, not number");
  expectCorrupt(head + R"("durationMs":-9999999999999999})", "field 'durationMs' must be from");
  expectCorrupt(head + R"("durationMs":1.5})", "field 'durationMs' must be an integer");
  expectCorrupt(head + R"("attempt":0})", "field 'attempt' must be from 1 to");
  expectCorrupt(head + R"("attempt":"2"})", "field 'attempt' must be an integer, not string");
  expectCorrupt(
      R"({"seq":3,"type":"STEP_FAILED","at":"2026-01-01T00:00:00.000Z","stepId":"a",)"
      R"("taskKind":"flow",)"
      R"("effectId":"a","error":{"code":"x","message":"y"},"retryable":true,"durationMs":1e300})",
      "field 'durationMs' must be an integer");
  Event ok = eventFromText("e", 3, head + R"("attempt":2,"durationMs":12})");
  EXPECT_EQ(ok.data.at("durationMs").as_int64(), 12);
}

TEST(EventTest, ReservedFieldsAreRefusedInData) {
  EXPECT_THROW(
      validateEventData(EventType::kExecutionCompleted, json::object{{"output", 1}, {"seq", 2}}),
      InvalidArgumentError);
}

TEST(EventTest, ControlEventsRoundTripAndRejectUnknownTypes) {
  ControlEvent c{1, "ERASURE_CONTENT_DELETED", 1780000000000, {{"deleted", 3}}};
  ControlEvent back = controlEventFromText(1, toText(c));
  EXPECT_EQ(back.type, c.type);
  EXPECT_EQ(back.data, c.data);
  EXPECT_THROW(
      controlEventFromText(1, R"({"seq":1,"type":"NOPE","at":"2026-01-01T00:00:00.000Z"})"),
      CorruptEventError);
}

TEST(EventTest, TimestampsAreRfc3339Millis) {
  EXPECT_EQ(formatTimestamp(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(formatTimestamp(1780000000123), "2026-05-28T20:26:40.123Z");
  EXPECT_EQ(parseTimestamp("2026-05-28T20:26:40.123Z"), 1780000000123);
}

TEST(FoldTest, IncrementalStateBytesMatchTheFoldedText) {
  std::vector<Event> events{
      executionStarted("wf", json::value{{"q", "é ü 中"}}, std::string("alice"), 1),
      stepCompleted("a", "flow", "a", json::value("x"), 2),
      stepCompleted("b", "tool", "t", json::value{{"n", json::array{1, 2, 3}}}, 3),
      executionParked("signal", "go", "", 4),
      signalReceived("go", json::value{{"ok", true}}, 5),
      signalReceived("go", json::value(2), 6),
      stepFailed("c", "flow", "c", "internal", "oops", false, 7),
      executionFailed("stepFailed", "step 'c' failed: oops", 8),
  };
  ExecutionInfo info;
  info.id = "e";
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].seq = static_cast<int64_t>(i + 1);
    applyEvent(info, events[i], static_cast<int64_t>(toText(events[i]).size()));
    std::vector<Event> prefix(events.begin(), events.begin() + static_cast<long>(i) + 1);
    EXPECT_EQ(info.stateBytes, static_cast<int64_t>(json::textBytes(foldEvents(prefix))))
        << "after " << eventTypeName(events[i].type);
  }
  EXPECT_EQ(info.status, ExecutionStatus::kFailed);
  EXPECT_EQ(info.endedAtMillis, std::optional<int64_t>(8));
  EXPECT_EQ(info.steps, 2);
}

}  // namespace
}  // namespace loom::kernel

namespace loom::kernel {
namespace {

TEST(AppendControlAtEnd, ConcurrentWritersEachGetTheirOwnSeqAndNothingIsLost) {
  MemoryEventStore store;
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&store, w] {
      for (int i = 0; i < 25; ++i) {
        appendControlAtEnd(
            store, ControlEvent{0, "RETENTION_RUN", 1, json::object{{"writer", w}, {"i", i}}});
      }
    });
  }
  for (auto& t : writers) t.join();
  auto log = store.readControl(1);
  ASSERT_EQ(log.size(), 100u);
  for (std::size_t i = 0; i < log.size(); ++i) EXPECT_EQ(log[i].seq, static_cast<int64_t>(i + 1));
}

}  // namespace
}  // namespace loom::kernel
