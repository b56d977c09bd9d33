#include "effects/step_ids.h"

#include <charconv>

namespace loom::effects {
namespace {

// Parses a decimal without sign or leading zero; nullopt otherwise.
std::optional<int64_t> number(std::string_view s) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::string turnStepPrefix(std::string_view loop, int64_t turn) {
  return std::string(loop) + "#turn:" + std::to_string(turn) + ":";
}

std::string modelStepId(std::string_view loop, int64_t turn) {
  return turnStepPrefix(loop, turn) + "model";
}

std::string toolStepId(std::string_view loop, int64_t turn, int64_t index) {
  return turnStepPrefix(loop, turn) + "tool:" + std::to_string(index);
}

std::string compactStepId(std::string_view loop, int64_t turn) {
  return turnStepPrefix(loop, turn) + "compact";
}

std::optional<AgentStepId> parseAgentStepId(std::string_view stepId) {
  constexpr std::string_view kMarker = "#turn:";
  auto at = stepId.rfind(kMarker);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  AgentStepId id;
  id.loop = std::string(stepId.substr(0, at));
  std::string_view rest = stepId.substr(at + kMarker.size());
  auto colon = rest.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto turn = number(rest.substr(0, colon));
  if (!turn || *turn < 1) return std::nullopt;
  id.turn = *turn;
  std::string_view tail = rest.substr(colon + 1);
  if (tail == "model") {
    id.kind = AgentStepKind::kModel;
  } else if (tail == "compact") {
    id.kind = AgentStepKind::kCompact;
  } else if (tail.substr(0, 5) == "tool:") {
    auto index = number(tail.substr(5));
    if (!index) return std::nullopt;
    id.kind = AgentStepKind::kTool;
    id.toolIndex = *index;
  } else {
    return std::nullopt;
  }
  return id;
}

bool isAgentToolStepId(std::string_view stepId) {
  auto id = parseAgentStepId(stepId);
  return id && id->kind == AgentStepKind::kTool;
}

}  // namespace loom::effects
