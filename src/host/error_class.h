// The class a language package raises for a loom::Error (the Python and Node.js packages):
// its own class where the record names one (ConfigValidationError, ContentCopiesRemainError,
// StepFailedError, ...), else its code's. One table, so both packages name errors alike.
#pragma once

#include <string_view>

#include "loom/app/config.h"
#include "loom/compliance/erase.h"
#include "loom/kernel/event.h"
#include "loom/kernel/lease.h"
#include "loom/util/error.h"
#include "loom/workflow/errors.h"

namespace loom::host {

inline std::string_view errorClassName(const Error& e) {
  if (dynamic_cast<const app::ConfigValidationError*>(&e)) return "ConfigValidationError";
  if (dynamic_cast<const workflow::StepFailedError*>(&e)) return "StepFailedError";
  if (dynamic_cast<const compliance::ContentCopiesRemainError*>(&e)) {
    return "ContentCopiesRemainError";
  }
  if (dynamic_cast<const kernel::LeaseHeldError*>(&e)) return "LeaseHeldError";
  if (dynamic_cast<const kernel::SealedEventError*>(&e)) return "SealedEventError";
  if (dynamic_cast<const CorruptEventError*>(&e)) return "CorruptEventError";
  if (dynamic_cast<const ContentStoreUnavailableError*>(&e)) return "ContentStoreUnavailableError";
  switch (e.code()) {
    case ErrorCode::kInvalidArgument: return "InvalidArgumentError";
    case ErrorCode::kConfig: return "ConfigError";
    case ErrorCode::kNotFound: return "NotFoundError";
    case ErrorCode::kAlreadyExists: return "AlreadyExistsError";
    case ErrorCode::kConflict: return "ConflictError";
    case ErrorCode::kFailedPrecondition: return "FailedPreconditionError";
    case ErrorCode::kUnavailable: return "UnavailableError";
    case ErrorCode::kDeadlineExceeded: return "DeadlineExceededError";
    case ErrorCode::kStopped: return "StoppedError";
    case ErrorCode::kDataLoss: return "DataLossError";
    case ErrorCode::kStepFailed: return "StepFailedError";
    case ErrorCode::kInternal: return "InternalError";
  }
  return "InternalError";
}

}  // namespace loom::host
