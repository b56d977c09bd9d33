// Loom's error hierarchy. Every failure Loom reports is a loom::Error whose code says what the
// caller should do about it (the abseil status-code idea): fix the input, retry the call,
// retry the transaction, fix state first, or treat it as data loss. Subclasses carry the
// record's names (ConfigError, ContentCopiesRemainError, ...). Thread-safe: immutable values.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace loom {

enum class ErrorCode {
  kInvalidArgument,     // fix the input (bad JSON, bad id, bad flag)
  kConfig,              // fix the configuration; nothing was composed
  kNotFound,            // the named thing does not exist
  kAlreadyExists,       // the named thing exists already
  kConflict,            // a concurrent writer won; re-read and retry the transaction
  kFailedPrecondition,  // the system is not in a state that allows this; fix state first
  kUnavailable,         // transient; retrying the call may succeed
  kDeadlineExceeded,    // a timeout passed
  kStopped,             // an operator stopped this (kill switch)
  kDataLoss,            // stored data is corrupt or unreadable
  kInternal,            // a bug in Loom
  kStepFailed,          // a journaled step failed (its error is recorded)
};

// Stable lower-case name of a code, as written into the log ("conflict", "dataLoss", ...).
std::string_view errorCodeName(ErrorCode code);
// Inverse of errorCodeName; unknown names map to kInternal.
ErrorCode errorCodeFromName(std::string_view name);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

#define LOOM_DEFINE_ERROR(Name, Code)                                                      \
  class Name : public Error {                                                              \
   public:                                                                                 \
    explicit Name(const std::string& message) : Error(ErrorCode::Code, message) {}        \
  };

LOOM_DEFINE_ERROR(InvalidArgumentError, kInvalidArgument)
LOOM_DEFINE_ERROR(ConfigError, kConfig)
LOOM_DEFINE_ERROR(NotFoundError, kNotFound)
LOOM_DEFINE_ERROR(AlreadyExistsError, kAlreadyExists)
LOOM_DEFINE_ERROR(ConflictError, kConflict)
LOOM_DEFINE_ERROR(FailedPreconditionError, kFailedPrecondition)
LOOM_DEFINE_ERROR(UnavailableError, kUnavailable)
LOOM_DEFINE_ERROR(DeadlineExceededError, kDeadlineExceeded)
LOOM_DEFINE_ERROR(DataLossError, kDataLoss)
LOOM_DEFINE_ERROR(InternalError, kInternal)

#undef LOOM_DEFINE_ERROR

// Unavailable for now, and the server said for how long (HTTP 429 or 503 with Retry-After):
// a durable retry (execution.retry) waits at least retryAfterMillis before the next attempt.
class RetryAfterError : public UnavailableError {
 public:
  RetryAfterError(const std::string& message, int64_t retryAfterMillis)
      : UnavailableError(message), retryAfterMillis_(retryAfterMillis) {}
  int64_t retryAfterMillis() const { return retryAfterMillis_; }

 private:
  int64_t retryAfterMillis_;
};

// Rethrows `e` as the error of the same code with `context` in front of its message, so the
// caller still acts on the code (retry, fix state, data loss) and knows how far an operation
// got (a sweep, retention). Subclasses become their code's class.
[[noreturn]] void rethrowWithContext(const Error& e, const std::string& context);

// A write Loom needs to journal an effect's result could not be made: a blob of a claim-checked
// result did not go into the content store (full, an I/O error, unreachable). The effect ran,
// but its result cannot be recorded: the runtime records nothing for the step (it is not a
// failure of the effect) and parks the run, reason "contentStoreUnavailable", with a next
// attempt execution.retry.maxIntervalMs later; a worker then (or `loom retry`, `loom resume`
// now) runs the call again. Retry middleware does not retry it in-process (running the effect
// again at once does not make room).
class ContentStoreUnavailableError : public UnavailableError {
 public:
  using UnavailableError::UnavailableError;
};

// A stored event that cannot be read: malformed JSON, a missing field, an unknown event type.
// Names the execution and the sequence number so an operator can find the row.
class CorruptEventError : public DataLossError {
 public:
  CorruptEventError(std::string executionId, long long seq, const std::string& what);
  const std::string& executionId() const { return executionId_; }
  long long seq() const { return seq_; }

 private:
  std::string executionId_;
  long long seq_;
};

}  // namespace loom
