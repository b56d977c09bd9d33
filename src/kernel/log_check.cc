#include "log_check.h"

#include <sodium.h>

#include <array>
#include <cstring>

#include "loom/util/error.h"

namespace loom::kernel {
namespace {

CorruptEventError corrupt(const std::string& executionId, int64_t seq, const std::string& what) {
  return CorruptEventError(executionId, seq,
                           what +
                               "; the log is not as Loom wrote it: restore loom.db from a "
                               "backup (docs/spec/events.md, Reading rules)");
}

}  // namespace

ScanCheck::ScanCheck(const std::string& executionId, int64_t fromSeq,
                     std::optional<int64_t> nextSeq)
    : executionId_(executionId),
      nextSeq_(nextSeq),
      expected_(fromSeq > 1 ? fromSeq : 1),
      fromStart_(fromSeq <= 1) {}

void ScanCheck::visit(const Event& event) {
  if (!nextSeq_) {
    throw corrupt(executionId_, event.seq,
                  "the log has events but the execution has no metadata row");
  }
  if (event.seq >= *nextSeq_) {
    throw corrupt(executionId_, event.seq,
                  "the execution's metadata says its next seq is " + std::to_string(*nextSeq_) +
                      ", behind its log");
  }
  if (event.seq != expected_) {
    throw corrupt(executionId_, expected_,
                  event.seq > expected_ ? "the row is missing (the log goes on at seq " +
                                              std::to_string(event.seq) + ")"
                                        : "seq " + std::to_string(event.seq) + " appears twice");
  }
  ++expected_;
  if (!fromStart_) return;
  if (event.seq == 1 && event.type != EventType::kExecutionStarted) {
    throw corrupt(executionId_, 1, "the log does not begin with EXECUTION_STARTED");
  }
  auto id = stepEventId(event);
  if (!id) return;
  refuseAfterCompletion(executionId_, event, completed_.contains(*id));
  if (event.type == EventType::kStepCompleted) completed_.insert(std::move(*id));
}

std::optional<std::string> stepEventId(const Event& event) {
  if (event.type != EventType::kStepCompleted && event.type != EventType::kStepFailed) {
    return std::nullopt;
  }
  if (isSealed(event.data) || isErased(event.data)) return std::nullopt;
  const json::value* stepId = event.data.if_contains("stepId");
  if (stepId == nullptr || !stepId->is_string()) return std::nullopt;  // the parser refuses it
  return std::string(stepId->get_string());
}

void refuseAfterCompletion(const std::string& executionId, const Event& event,
                           bool completedBefore) {
  if (!completedBefore) return;
  throw corrupt(executionId, event.seq,
                "step '" + std::string(event.data.at("stepId").as_string()) +
                    "' already completed earlier in the log; a second " +
                    std::string(eventTypeName(event.type)) + " for it is not something Loom writes");
}

void ScanCheck::finish() const {
  if (nextSeq_ && expected_ < *nextSeq_) {
    throw corrupt(executionId_, expected_,
                  "the row is missing (the execution's metadata says its log runs to "
                  "seq " +
                      std::to_string(*nextSeq_ - 1) + ")");
  }
}

int64_t rowChecksum(std::string_view executionId, int64_t seq, std::string_view body) {
  static const bool kSodiumReady = sodium_init() >= 0;  // picks the fast implementation once
  (void)kSodiumReady;
  crypto_generichash_state state;
  std::array<unsigned char, 8> digest{};
  crypto_generichash_init(&state, nullptr, 0, digest.size());
  const unsigned char zero = 0;
  std::string seqText = std::to_string(seq);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(executionId.data()),
                            executionId.size());
  crypto_generichash_update(&state, &zero, 1);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(seqText.data()),
                            seqText.size());
  crypto_generichash_update(&state, &zero, 1);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(body.data()),
                            body.size());
  crypto_generichash_final(&state, digest.data(), digest.size());
  uint64_t value = 0;
  for (std::size_t i = 0; i < digest.size(); ++i) value |= uint64_t{digest[i]} << (8 * i);
  int64_t out = 0;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

namespace {

void verifyChecksum(const std::string& label, std::string_view executionId, int64_t seq,
                    std::string_view body, std::optional<int64_t> stored) {
  if (!stored || *stored == rowChecksum(executionId, seq, body)) return;
  throw CorruptEventError(label, seq,
                          "the row's checksum does not match its bytes: it was changed after "
                          "Loom wrote it (disk corruption or an edit of loom.db); restore "
                          "loom.db from a backup");
}

}  // namespace

void verifyRowChecksum(const std::string& executionId, int64_t seq, std::string_view body,
                       std::optional<int64_t> stored) {
  verifyChecksum(executionId, executionId, seq, body, stored);
}

void verifyControlRowChecksum(int64_t seq, std::string_view body, std::optional<int64_t> stored) {
  verifyChecksum("(control log)", "", seq, body, stored);
}

}  // namespace loom::kernel
