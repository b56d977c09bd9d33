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

CorruptEventError::CorruptEventError(std::string executionId, long long seq,
                                     const std::string& what)
    : DataLossError("corrupt event in execution '" + executionId + "' at seq " +
                    std::to_string(seq) + ": " + what),
      executionId_(std::move(executionId)),
      seq_(seq) {}

}  // namespace loom
