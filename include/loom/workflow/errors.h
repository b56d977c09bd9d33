// Errors a workflow can see from its context.
#pragma once

#include <string>

#include "loom/util/error.h"

namespace loom::workflow {

// A journaled step failed. `cause()` is the code of the original error (also what the log
// records); on replay the same error is raised from the record without re-running the step.
class StepFailedError : public Error {
 public:
  StepFailedError(std::string stepId, ErrorCode cause, const std::string& message)
      : Error(ErrorCode::kStepFailed, "step '" + stepId + "' failed: " + message),
        stepId_(std::move(stepId)),
        cause_(cause),
        causeMessage_(message) {}
  const std::string& stepId() const { return stepId_; }
  ErrorCode cause() const { return cause_; }
  const std::string& causeMessage() const { return causeMessage_; }

 private:
  std::string stepId_;
  ErrorCode cause_;
  std::string causeMessage_;
};

// The same step id was used twice in one run: replay could not tell the two apart.
class DuplicateStepError : public InvalidArgumentError {
 public:
  explicit DuplicateStepError(const std::string& stepId)
      : InvalidArgumentError("step id '" + stepId +
                             "' is used twice in one run; give each step a unique id") {}
};

}  // namespace loom::workflow
