#include "loom/util/error.h"

#include <array>
#include <utility>

namespace loom {
namespace {

constexpr std::array<std::pair<ErrorCode, std::string_view>, 12> kNames{{
    {ErrorCode::kInvalidArgument, "invalidArgument"},
    {ErrorCode::kConfig, "config"},
    {ErrorCode::kNotFound, "notFound"},
    {ErrorCode::kAlreadyExists, "alreadyExists"},
    {ErrorCode::kConflict, "conflict"},
    {ErrorCode::kFailedPrecondition, "failedPrecondition"},
    {ErrorCode::kUnavailable, "unavailable"},
    {ErrorCode::kDeadlineExceeded, "deadlineExceeded"},
    {ErrorCode::kStopped, "stopped"},
    {ErrorCode::kDataLoss, "dataLoss"},
    {ErrorCode::kInternal, "internal"},
    {ErrorCode::kStepFailed, "stepFailed"},
}};

}  // namespace

std::string_view errorCodeName(ErrorCode code) {
  for (const auto& [c, name] : kNames) {
    if (c == code) return name;
  }
  return "internal";
}

ErrorCode errorCodeFromName(std::string_view name) {
  for (const auto& [c, n] : kNames) {
    if (n == name) return c;
  }
  return ErrorCode::kInternal;
}

void rethrowWithContext(const Error& e, const std::string& context) {
  std::string m = context + ": " + e.what();
  switch (e.code()) {
    case ErrorCode::kInvalidArgument:
      throw InvalidArgumentError(m);
    case ErrorCode::kConfig:
      throw ConfigError(m);
    case ErrorCode::kNotFound:
      throw NotFoundError(m);
    case ErrorCode::kAlreadyExists:
      throw AlreadyExistsError(m);
    case ErrorCode::kConflict:
      throw ConflictError(m);
    case ErrorCode::kFailedPrecondition:
      throw FailedPreconditionError(m);
    case ErrorCode::kUnavailable:
      throw UnavailableError(m);
    case ErrorCode::kDeadlineExceeded:
      throw DeadlineExceededError(m);
    case ErrorCode::kDataLoss:
      throw DataLossError(m);
    case ErrorCode::kInternal:
      throw InternalError(m);
    default:
      throw Error(e.code(), m);
  }
}

CorruptEventError::CorruptEventError(std::string executionId, long long seq,
                                     const std::string& what)
    : DataLossError("corrupt event in execution '" + executionId + "' at seq " +
                    std::to_string(seq) + ": " + what),
      executionId_(std::move(executionId)),
      seq_(seq) {}

}  // namespace loom
