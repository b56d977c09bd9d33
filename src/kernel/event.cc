#include "loom/kernel/event.h"

#include <algorithm>
#include <array>
#include <utility>

#include "control_types.h"
#include "loom/kernel/usage.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"

namespace loom::kernel {
namespace {

constexpr std::array<std::pair<EventType, std::string_view>, 9> kTypeNames{{
    {EventType::kExecutionStarted, "EXECUTION_STARTED"},
    {EventType::kStepCompleted, "STEP_COMPLETED"},
    {EventType::kStepFailed, "STEP_FAILED"},
    {EventType::kExecutionParked, "EXECUTION_PARKED"},
    {EventType::kSignalReceived, "SIGNAL_RECEIVED"},
    {EventType::kExecutionCompleted, "EXECUTION_COMPLETED"},
    {EventType::kExecutionFailed, "EXECUTION_FAILED"},
    {EventType::kExecutionCancelled, "EXECUTION_CANCELLED"},
    {EventType::kCodeUpgraded, "CODE_UPGRADED"},
}};

constexpr std::array<std::string_view, 7> kControlEventTypes{
    "BLOB_READ",
    "ERASURE_CONTENT_DELETE_INTENDED",
    "ERASURE_CONTENT_DELETED",
    "SUBJECT_SHREDDED",
    "RETENTION_ARCHIVED",
    "RETENTION_RUN",
    "RETENTION_SUPERSEDED",
};

// The reserved members of the event envelope; data may not use them.
bool isEnvelopeKey(std::string_view key) { return key == "seq" || key == "type" || key == "at"; }

void requireKind(const json::object& data, std::string_view key, boost::json::kind kind,
                 std::string_view kindText) {
  const json::value& v = json::require(data, key);
  if (v.kind() != kind) {
    throw InvalidArgumentError("field '" + std::string(key) + "' must be " + std::string(kindText) +
                               ", not " + std::string(json::kindName(v)));
  }
}

void requireString(const json::object& data, std::string_view key) {
  requireKind(data, key, boost::json::kind::string, "a string");
}

// An optional whole number in [min, max]: a stored number another build would read
// differently (a double, a 111-digit integer) is refused, not carried on.
void optionalIntIn(const json::object& data, std::string_view key, int64_t min, int64_t max) {
  if (!data.contains(key)) return;
  int64_t n = json::requireInt(data, key);
  if (n < min || n > max) {
    throw InvalidArgumentError("field '" + std::string(key) + "' must be from " +
                               std::to_string(min) + " to " + std::to_string(max) + ", not " +
                               std::to_string(n));
  }
}

// The runtime's own numbers on a step's events: its attempt (from 1) and how long it ran
// (negative in rows written while the wall clock stepped back, before writers clamped it).
void requireStepNumbers(const json::object& data) {
  constexpr int64_t kMaxAttempt = 1'000'000;
  constexpr int64_t kMaxDurationMs = int64_t{1} << 42;  // about 139 years
  optionalIntIn(data, "attempt", 1, kMaxAttempt);
  optionalIntIn(data, "durationMs", -kMaxDurationMs, kMaxDurationMs);
}

void requireError(const json::object& data) {
  requireKind(data, "error", boost::json::kind::object, "an object");
  const auto& error = data.at("error").get_object();
  requireString(error, "code");
  requireString(error, "message");
}

json::object envelope(int64_t seq, std::string_view type, int64_t atMillis,
                      const json::object& data) {
  json::object o;
  o.reserve(data.size() + 3);
  o["seq"] = seq;
  o["type"] = type;
  o["at"] = formatTimestamp(atMillis);
  for (const auto& kv : data) o.emplace(kv.key(), kv.value());
  return o;
}

// Splits a stored envelope into its header and data; throws InvalidArgumentError.
std::pair<std::string, int64_t> readHeader(const json::object& o, int64_t seq, json::object& data) {
  int64_t textSeq = json::requireInt(o, "seq");
  if (textSeq != seq) {
    throw InvalidArgumentError("seq field says " + std::to_string(textSeq));
  }
  std::string type(json::requireString(o, "type"));
  int64_t at = parseTimestamp(std::string(json::requireString(o, "at")));
  for (const auto& kv : o) {
    if (!isEnvelopeKey(kv.key())) data.emplace(kv.key(), kv.value());
  }
  return {type, at};
}

// True when `data` is {marker: {...}} plus, at most, the clear "workflow", "subject" and
// "codeVersion" (EVENT_SCHEMA 3; CODE_UPGRADED keeps only "codeVersion", EVENT_SCHEMA 4) or a
// model step's "usage" (EVENT_SCHEMA 5).
bool hasOpaqueShape(const json::object& data, std::string_view marker) {
  const auto* m = data.if_contains(marker);
  if (m == nullptr || !m->is_object()) return false;
  for (const auto& kv : data) {
    if (kv.key() != marker && kv.key() != "workflow" && kv.key() != "subject" &&
        kv.key() != "codeVersion" && kv.key() != "usage") {
      return false;
    }
  }
  return true;
}

// A sealed or erased payload: its marker's own fields, and the clear fields only where
// EXECUTION_STARTED and CODE_UPGRADED keep them.
void validateOpaque(EventType type, const json::object& data, std::string_view marker) {
  if (type == EventType::kExecutionStarted) {
    requireString(data, "workflow");
    json::optionalString(data, "subject");
    json::optionalString(data, "codeVersion");
  } else if (type == EventType::kCodeUpgraded) {
    requireString(data, "codeVersion");
    if (data.size() != 2) {
      throw InvalidArgumentError("a " + std::string(marker) +
                                 " CODE_UPGRADED holds only '" + std::string(marker) +
                                 "' and 'codeVersion'");
    }
  } else if (type == EventType::kStepCompleted && data.contains("usage")) {
    validateStepUsage(data.at("usage"));
    if (data.size() != 2) {
      throw InvalidArgumentError("a " + std::string(marker) + " STEP_COMPLETED holds only '" +
                                 std::string(marker) + "' and 'usage'");
    }
  } else if (data.size() != 1) {
    throw InvalidArgumentError("a " + std::string(marker) + " " + std::string(eventTypeName(type)) +
                               " holds only '" + std::string(marker) + "'");
  }
  const auto& body = data.at(marker).get_object();
  requireString(body, "subject");
  if (marker == kSealedKey) {
    requireString(body, "keyId");
    requireString(body, "nonce");
    requireString(body, "ciphertext");
  }
}

}  // namespace

bool isSealed(const json::object& data) { return hasOpaqueShape(data, kSealedKey); }

bool isErased(const json::object& data) { return hasOpaqueShape(data, kErasedKey); }

namespace {

std::string sealedSubjectOf(const json::object& data) {
  const auto* body = data.if_contains(kSealedKey);
  const auto* o = body != nullptr ? body->if_object() : nullptr;
  const auto* s = o != nullptr ? o->if_contains("subject") : nullptr;
  return s != nullptr && s->is_string() ? std::string(s->get_string()) : std::string("?");
}

}  // namespace

SealedEventError::SealedEventError(std::string executionId, int64_t seq, std::string subject,
                                   std::string_view howToOpen)
    : FailedPreconditionError(
          "execution '" + executionId + "' is sealed (event " + std::to_string(seq) +
          ", subject '" + subject +
          "') and this command has no keys to open it: " + std::string(howToOpen)),
      executionId_(std::move(executionId)),
      seq_(seq),
      subject_(std::move(subject)) {}

void requireUnsealed(const std::string& executionId, const Event& event,
                     std::string_view howToOpen) {
  if (isSealed(event.data)) {
    throw SealedEventError(executionId, event.seq, sealedSubjectOf(event.data), howToOpen);
  }
}

std::string_view eventTypeName(EventType type) {
  for (const auto& [t, name] : kTypeNames) {
    if (t == type) return name;
  }
  return "UNKNOWN";
}

std::optional<EventType> eventTypeFromName(std::string_view name) {
  for (const auto& [t, n] : kTypeNames) {
    if (n == name) return t;
  }
  return std::nullopt;
}

void validateEventData(EventType type, const json::object& data) {
  for (const auto& kv : data) {
    if (isEnvelopeKey(kv.key())) {
      throw InvalidArgumentError("field '" + std::string(kv.key()) +
                                 "' is reserved for the event envelope");
    }
  }
  if (isSealed(data)) return validateOpaque(type, data, kSealedKey);
  if (isErased(data)) return validateOpaque(type, data, kErasedKey);
  switch (type) {
    case EventType::kExecutionStarted:
      requireString(data, "workflow");
      json::require(data, "input");
      // Optional, but metadata and fold only agree on a string (or null) subject.
      json::optionalString(data, "subject");
      return;
    case EventType::kStepCompleted:
      requireString(data, "stepId");
      requireString(data, "taskKind");
      requireString(data, "effectId");
      json::require(data, "output");
      requireStepNumbers(data);
      if (const auto* usage = data.if_contains("usage")) validateStepUsage(*usage);
      return;
    case EventType::kStepFailed:
      requireString(data, "stepId");
      requireString(data, "taskKind");
      requireString(data, "effectId");
      requireError(data);
      requireKind(data, "retryable", boost::json::kind::bool_, "a boolean");
      requireStepNumbers(data);
      return;
    case EventType::kExecutionParked:
      requireString(data, "reason");
      return;
    case EventType::kSignalReceived:
      requireString(data, "name");
      json::require(data, "payload");
      return;
    case EventType::kExecutionCompleted:
      json::require(data, "output");
      return;
    case EventType::kExecutionFailed:
      requireError(data);
      return;
    case EventType::kExecutionCancelled:
      requireString(data, "reason");
      return;
    case EventType::kCodeUpgraded:
      requireString(data, "codeVersion");
      json::optionalString(data, "from");
      return;
  }
}

json::object toJson(const Event& event) {
  return envelope(event.seq, eventTypeName(event.type), event.atMillis, event.data);
}

namespace {
std::string renderEnvelope(int64_t seq, std::string_view type, int64_t atMillis,
                           const json::object& data, int64_t* outputBytes) {
  std::string out;
  out.reserve(96 + data.size() * 24);
  out += R"({"seq":)";
  out += std::to_string(seq);
  out += R"(,"type":")";
  out += type;
  out += R"(","at":")";
  out += formatTimestamp(atMillis);
  out += '"';
  if (outputBytes) *outputBytes = -1;
  for (const auto& kv : data) {
    out += ',';
    json::appendQuoted(out, kv.key());
    out += ':';
    std::size_t n = json::appendText(out, kv.value());
    if (outputBytes && kv.key() == "output") *outputBytes = static_cast<int64_t>(n);
  }
  out += '}';
  return out;
}
}  // namespace

std::string toText(const Event& event, int64_t* outputBytes) {
  return renderEnvelope(event.seq, eventTypeName(event.type), event.atMillis, event.data,
                        outputBytes);
}

Event eventFromJson(const std::string& executionId, int64_t seq, const json::value& v) {
  try {
    if (!v.is_object()) throw InvalidArgumentError("not a JSON object");
    Event event;
    event.seq = seq;
    auto [type, at] = readHeader(v.get_object(), seq, event.data);
    auto known = eventTypeFromName(type);
    if (!known) throw InvalidArgumentError("unknown event type '" + type + "'");
    event.type = *known;
    event.atMillis = at;
    validateEventData(event.type, event.data);
    return event;
  } catch (const InvalidArgumentError& e) {
    throw CorruptEventError(executionId, seq, e.what());
  }
}

Event eventFromText(const std::string& executionId, int64_t seq, std::string_view text) {
  json::value v;
  try {
    v = json::parseStored(text, "event text");
  } catch (const InvalidArgumentError& e) {
    throw CorruptEventError(executionId, seq, e.what());
  }
  return eventFromJson(executionId, seq, v);
}

namespace {
Event make(EventType type, int64_t atMillis, json::object data) {
  Event e;
  e.type = type;
  e.atMillis = atMillis;
  e.data = std::move(data);
  return e;
}

json::object errorObject(std::string_view code, std::string_view message) {
  return json::object{{"code", code}, {"message", message}};
}
}  // namespace

Event executionStarted(std::string_view workflow, json::value input,
                       const std::optional<std::string>& subject, int64_t atMillis) {
  json::object d{{"workflow", workflow}, {"input", std::move(input)}};
  if (subject) d["subject"] = *subject;
  return make(EventType::kExecutionStarted, atMillis, std::move(d));
}

Event stepCompleted(std::string_view stepId, std::string_view taskKind, std::string_view effectId,
                    json::value output, int64_t atMillis) {
  json::object d;
  d.reserve(7);  // room for the runtime's input, attempt and durationMs: no regrowth
  d.emplace("stepId", stepId);
  d.emplace("taskKind", taskKind);
  d.emplace("effectId", effectId);
  d.emplace("output", std::move(output));
  return make(EventType::kStepCompleted, atMillis, std::move(d));
}

Event stepFailed(std::string_view stepId, std::string_view taskKind, std::string_view effectId,
                 std::string_view code, std::string_view message, bool retryable,
                 int64_t atMillis) {
  return make(EventType::kStepFailed, atMillis,
              {{"stepId", stepId},
               {"taskKind", taskKind},
               {"effectId", effectId},
               {"error", errorObject(code, message)},
               {"retryable", retryable}});
}

Event executionParked(std::string_view reason, std::string_view waitingFor, std::string_view stepId,
                      int64_t atMillis, std::string_view detail,
                      std::optional<int64_t> wakeAtMillis) {
  json::object d{{"reason", reason}};
  if (!waitingFor.empty()) d["waitingFor"] = waitingFor;
  if (!stepId.empty()) d["stepId"] = stepId;
  if (!detail.empty()) d["detail"] = detail;
  if (wakeAtMillis) d["wakeAt"] = formatTimestamp(*wakeAtMillis);
  return make(EventType::kExecutionParked, atMillis, std::move(d));
}

namespace {
std::optional<int64_t> timestampField(const json::object& data, std::string_view key) {
  const auto* wake = data.if_contains(key);
  if (wake == nullptr || !wake->is_string()) return std::nullopt;
  try {
    return parseTimestamp(std::string(wake->get_string()));
  } catch (const InvalidArgumentError&) {
    return std::nullopt;
  }
}
}  // namespace

std::optional<int64_t> parkedWakeAt(const json::object& parkedData) {
  return timestampField(parkedData, "wakeAt");
}

std::optional<int64_t> stepNextAttemptAt(const json::object& stepFailedData) {
  return timestampField(stepFailedData, "nextAttemptAt");
}

Event signalReceived(std::string_view name, json::value payload, int64_t atMillis) {
  return make(EventType::kSignalReceived, atMillis,
              {{"name", name}, {"payload", std::move(payload)}});
}

Event executionCompleted(json::value output, int64_t atMillis) {
  return make(EventType::kExecutionCompleted, atMillis, {{"output", std::move(output)}});
}

Event executionFailed(std::string_view code, std::string_view message, int64_t atMillis) {
  return make(EventType::kExecutionFailed, atMillis, {{"error", errorObject(code, message)}});
}

Event executionCancelled(std::string_view reason, int64_t atMillis) {
  return make(EventType::kExecutionCancelled, atMillis, {{"reason", reason}});
}

Event codeUpgraded(std::string_view codeVersion, const std::optional<std::string>& from,
                   int64_t atMillis) {
  json::object data{{"codeVersion", codeVersion}};
  if (from) data["from"] = *from;
  return make(EventType::kCodeUpgraded, atMillis, std::move(data));
}

std::vector<std::string> knownControlEventTypes() {
  std::vector<std::string> out(kControlEventTypes.begin(), kControlEventTypes.end());
  std::sort(out.begin(), out.end());  // std::string orders as unsigned bytes
  return out;
}

bool isKnownControlEventType(std::string_view type) {
  for (auto t : kControlEventTypes) {
    if (t == type) return true;
  }
  return false;
}

std::string toText(const ControlEvent& event) {
  return renderEnvelope(event.seq, event.type, event.atMillis, event.data, nullptr);
}

ControlEvent controlEventFromText(int64_t seq, std::string_view text) {
  try {
    json::value v = json::parseStored(text, "control event text");
    if (!v.is_object()) throw InvalidArgumentError("not a JSON object");
    ControlEvent event;
    event.seq = seq;
    auto [type, at] = readHeader(v.get_object(), seq, event.data);
    if (!isKnownControlEventType(type)) {
      throw InvalidArgumentError("unknown control event type '" + type + "'");
    }
    event.type = std::move(type);
    event.atMillis = at;
    return event;
  } catch (const InvalidArgumentError& e) {
    throw CorruptEventError("(control log)", seq, e.what());
  }
}

}  // namespace loom::kernel
