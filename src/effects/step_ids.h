// The step ids of an agent loop (DESIGN §1): `<loop>#turn:<i>:model`, `<loop>#turn:<i>:tool:<j>`
// and `<loop>#turn:<i>:compact`, with i >= 1 and j >= 0 in decimal without leading zeros.
// They live here, below the middleware, because the claim-check's scope guard (ADR 0140 D9)
// must recognise a tool frame without depending on the agent module. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loom::effects {

enum class AgentStepKind { kModel, kTool, kCompact };

struct AgentStepId {
  std::string loop;
  int64_t turn = 0;
  AgentStepKind kind = AgentStepKind::kModel;
  int64_t toolIndex = -1;  // kTool only
};

// `<loop>#turn:<i>:`: what every step id of turn i starts with (approval deadlines included).
std::string turnStepPrefix(std::string_view loop, int64_t turn);
std::string modelStepId(std::string_view loop, int64_t turn);
std::string toolStepId(std::string_view loop, int64_t turn, int64_t index);
std::string compactStepId(std::string_view loop, int64_t turn);

// Parses an agent-loop step id; nullopt for any other step id (exact grammar, no leniency).
std::optional<AgentStepId> parseAgentStepId(std::string_view stepId);

// True when `stepId` is `<loop>#turn:<i>:tool:<j>` for some loop, i and j.
bool isAgentToolStepId(std::string_view stepId);

}  // namespace loom::effects
