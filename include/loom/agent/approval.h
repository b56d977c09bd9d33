// A person's decision on a tool call that requires approval: the payload of the signal
// `approve:<stepId>` that an agent's run parks for. One home for its shape, read by the agent
// loop and checked by every door a decision comes in by (`loom signal`, the inspector's HTTP
// API), so a mistyped decision is refused before it is recorded instead of read as a denial.
// Free functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "loom/json/json.h"

namespace loom::agent {

// The prefix of an approval signal's name: `approve:<stepId>`.
inline constexpr std::string_view kApprovalSignalPrefix = "approve:";

// The one shape a decision takes: {"approved": true|false, "reason"?: string}.
inline constexpr std::string_view kApprovalShape = R"({"approved": true|false, "reason"?: string})";

struct ApprovalDecision {
  bool approved = false;
  std::optional<std::string> reason;  // told to the model with a denial
};

// True when `signalName` names an approval (`approve:<stepId>`).
bool isApprovalSignal(std::string_view signalName);

// Reads a decision; InvalidArgumentError naming what is wrong and the expected shape when
// `payload` is anything else (a bare `true`, `{"approve": true}`, `{"approved": "yes"}`, an
// unknown key).
ApprovalDecision readApprovalDecision(const json::value& payload);

}  // namespace loom::agent
