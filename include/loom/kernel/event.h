// The events of an execution log and of the control log (EVENT_SCHEMA 4,
// docs/spec/events.md). An Event is plain data; its JSON text is what stores keep and what
// log size measures. Parsing validates every field a type requires, so a corrupt or unknown
// row is a CorruptEventError naming the execution and seq, never silently skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "loom/json/json.h"
#include "loom/util/error.h"

namespace loom::kernel {

enum class EventType {
  kExecutionStarted,    // workflow, input, subject?
  kStepCompleted,       // stepId, taskKind, effectId, output, input?, attempt?, durationMs?
  kStepFailed,          // stepId, taskKind, effectId, error{code,message}, retryable
  kExecutionParked,     // reason, waitingFor?, stepId?
  kSignalReceived,      // name, payload
  kExecutionCompleted,  // output
  kExecutionFailed,     // error{code,message}
  kExecutionCancelled,  // reason (`loom cancel`; EVENT_SCHEMA 2)
  kCodeUpgraded,        // codeVersion, from? (`loom upgrade`; EVENT_SCHEMA 4)
};

// "EXECUTION_STARTED", "STEP_COMPLETED", ...
std::string_view eventTypeName(EventType type);
std::optional<EventType> eventTypeFromName(std::string_view name);

struct Event {
  int64_t seq = 0;  // 1-based position in the log; assigned by the store on append
  EventType type = EventType::kExecutionStarted;
  int64_t atMillis = 0;  // when it happened, ms since the epoch (text: RFC 3339 UTC)
  json::object data;     // the type's own fields (see the table in docs/spec/events.md)
};

// {"seq":..,"type":..,"at":..,<data fields>}: the stored JSON of an event.
json::object toJson(const Event& event);
// The stored text, rendered without copying the event. When `outputBytes` is given it gets
// the text length of the "output" member (-1 when there is none), which saves the stores a
// second serialization when they measure folded-state size.
std::string toText(const Event& event, int64_t* outputBytes = nullptr);
// Parses and validates one stored event of `executionId`. `seq` is where the store found it
// (it must match the text's own seq). Throws CorruptEventError on any defect.
Event eventFromText(const std::string& executionId, int64_t seq, std::string_view text);
Event eventFromJson(const std::string& executionId, int64_t seq, const json::value& v);
// Checks that `data` holds every field `type` requires with the right JSON kind; throws
// InvalidArgumentError naming the field. Stores call it before writing anything. A sealed or
// erased payload (below) is accepted for any type; only its own shape is checked.
void validateEventData(EventType type, const json::object& data);

// Sealed and erased payloads (docs/spec/events.md, "Sealed events"). A sealed event's data is
// {"sealed": {"subject", "keyId", "nonce", "ciphertext"}} (EXECUTION_STARTED keeps "workflow"
// and "subject" in clear beside it); the compliance module seals and unseals it. An event
// whose subject's key was shredded reads as erased: {"erased": {"subject": S}} (same clear
// fields for EXECUTION_STARTED). Both are recognized by shape: a "sealed" (or "erased")
// object member and no member but "workflow" and "subject" beside it.
inline constexpr std::string_view kSealedKey = "sealed";
inline constexpr std::string_view kErasedKey = "erased";
bool isSealed(const json::object& data);
bool isErased(const json::object& data);

// A sealed event met by a reader that has no keys to open it (a home opened without
// security.keys, or code below the sealing layer). Reading on would treat the event as citing
// and holding nothing, so readers refuse instead. FailedPrecondition: give the reader the
// keys (the message says how), then run again.
class SealedEventError : public FailedPreconditionError {
 public:
  SealedEventError(std::string executionId, int64_t seq, std::string subject,
                   std::string_view howToOpen);
  const std::string& executionId() const { return executionId_; }
  int64_t seq() const { return seq_; }
  const std::string& subject() const { return subject_; }

 private:
  std::string executionId_;
  int64_t seq_;
  std::string subject_;
};

// How a command opens sealed events, for SealedEventError: the default when the caller knows
// nothing better.
inline constexpr std::string_view kHowToOpenSealed =
    "pass --config FILE with the [security.keys] the runs were made with (docs/compliance.md)";

// Throws SealedEventError when `event` is sealed; erased and clear events pass.
void requireUnsealed(const std::string& executionId, const Event& event,
                     std::string_view howToOpen = kHowToOpenSealed);

// Constructors for the common events (fill atMillis from a Clock at the call site).
Event executionStarted(std::string_view workflow, json::value input,
                       const std::optional<std::string>& subject, int64_t atMillis);
Event stepCompleted(std::string_view stepId, std::string_view taskKind,
                    std::string_view effectId, json::value output, int64_t atMillis);
Event stepFailed(std::string_view stepId, std::string_view taskKind, std::string_view effectId,
                 std::string_view code, std::string_view message, bool retryable,
                 int64_t atMillis);
Event executionParked(std::string_view reason, std::string_view waitingFor, std::string_view stepId,
                      int64_t atMillis, std::string_view detail = {},
                      std::optional<int64_t> wakeAtMillis = std::nullopt);
// The wake time of an EXECUTION_PARKED (its "wakeAt": a timer, an approval's time-out);
// nullopt when it has none.
std::optional<int64_t> parkedWakeAt(const json::object& parkedData);
// When a retryable STEP_FAILED's step runs again (its "nextAttemptAt", execution.retry);
// nullopt when it has none (a final failure, or one stopped by the kill switch).
std::optional<int64_t> stepNextAttemptAt(const json::object& stepFailedData);
Event signalReceived(std::string_view name, json::value payload, int64_t atMillis);
Event executionCompleted(json::value output, int64_t atMillis);
Event executionFailed(std::string_view code, std::string_view message, int64_t atMillis);
Event executionCancelled(std::string_view reason, int64_t atMillis);
// `loom upgrade`: the run continues on `codeVersion` from here on (`from`: the version it had;
// nullopt when it recorded none).
Event codeUpgraded(std::string_view codeVersion, const std::optional<std::string>& from,
                   int64_t atMillis);

// The control log holds system events that belong to no execution (erasure intents and
// results, subject shreds, retention runs; kill-switch changes live in their own store). Same
// envelope {"seq","type","at",...}; its types are listed in docs/spec/events.md and unknown ones
// are CorruptEventError as well.
struct ControlEvent {
  int64_t seq = 0;
  std::string type;  // one of kControlEventTypes
  int64_t atMillis = 0;
  json::object data;
};

bool isKnownControlEventType(std::string_view type);
std::string toText(const ControlEvent& event);
ControlEvent controlEventFromText(int64_t seq, std::string_view text);

}  // namespace loom::kernel
