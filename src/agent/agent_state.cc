#include "loom/agent/agent_state.h"

#include <algorithm>

#include "agent/transcript.h"
#include "effects/step_ids.h"
#include "loom/agent/model_input.h"
#include "loom/effects/taint.h"

namespace loom::agent {
namespace {

using effects::AgentStepKind;

json::object frameOf(const json::object& d, const effects::AgentStepId& id) {
  json::object meta;
  if (const auto* ms = d.if_contains("durationMs")) meta["durationMs"] = *ms;
  meta["attempt"] = d.contains("attempt") ? d.at("attempt") : json::value(1);
  meta["outputBytes"] = static_cast<int64_t>(json::textBytes(d.at("output")));
  return json::object{{"stepId", d.at("stepId")}, {"tool", d.at("effectId")},
                      {"turn", id.turn},          {"output", d.at("output")},
                      {"meta", std::move(meta)}};
}

json::object decisionOf(const json::value& message, int64_t turn) {
  const auto* calls = message.is_object() ? message.get_object().if_contains("toolCalls") : nullptr;
  std::size_t n = calls && calls->is_array() ? calls->get_array().size() : 0;
  if (n == 0) {
    return json::object{{"turn", turn}, {"decision", "answer"},
                        {"why", "the model answered without tool calls"}};
  }
  return json::object{{"turn", turn}, {"decision", "callTools"},
                      {"why", "the model asked for " + std::to_string(n) + " tool call(s)"}};
}

void addOrigins(json::array& seen, const json::value& output) {
  for (const auto& o : effects::taintOrigins(output)) {
    if (std::find(seen.begin(), seen.end(), json::value(o)) == seen.end()) seen.emplace_back(o);
  }
}

// A STEP_COMPLETED whose fields can be read (not sealed, not erased).
bool readableStep(const kernel::Event& e) {
  if (e.type != kernel::EventType::kStepCompleted) return false;
  const auto* stepId = e.data.if_contains("stepId");
  return stepId != nullptr && stepId->is_string() && e.data.contains("output");
}

}  // namespace

AgentStateFolder::AgentStateFolder(std::string_view loop) : loop_(loop), sizer_(loop) {}

void AgentStateFolder::apply(const kernel::Event& e) {
  sizer_.apply(e);
  if (!readableStep(e)) return;  // sealed or erased steps have nothing to fold
  const auto& d = e.data;
  auto id = effects::parseAgentStepId(std::string_view(d.at("stepId").as_string()));
  if (!id || id->loop != loop_) return;
  if (id->kind == AgentStepKind::kTool) {
    frames_.push_back(frameOf(d, *id));
    addOrigins(sawTaintFrom_, d.at("output"));
  } else if (id->kind == AgentStepKind::kModel) {
    turnOutputs_.push_back(d.at("output"));
    decisions_.push_back(decisionOf(d.at("output"), id->turn));
  } else {
    decisions_.push_back(json::object{{"turn", id->turn},
                                      {"decision", "compact"},
                                      {"why", "the transcript passed compaction.triggerBytes"}});
  }
}

json::object AgentStateFolder::take() {
  return json::object{{"loop", loop_},
                      {"frames", std::move(frames_)},
                      {"turnOutputs", std::move(turnOutputs_)},
                      {"_decisions", std::move(decisions_)},
                      {"transcriptBytes", sizer_.bytes()},
                      {"sawTaintFrom", std::move(sawTaintFrom_)}};
}

json::object foldAgentState(const std::vector<kernel::Event>& events, std::string_view loop) {
  AgentStateFolder folder(loop);
  for (const auto& e : events) folder.apply(e);
  return folder.take();
}

std::optional<std::string> agentLoopOf(const kernel::Event& e) {
  if (!readableStep(e)) return std::nullopt;
  auto id = effects::parseAgentStepId(std::string_view(e.data.at("stepId").as_string()));
  if (!id) return std::nullopt;
  return std::string(id->loop);
}

std::vector<std::string> agentLoopsOf(const std::vector<kernel::Event>& events) {
  std::vector<std::string> loops;
  for (const auto& e : events) {
    auto loop = agentLoopOf(e);
    if (loop && std::find(loops.begin(), loops.end(), *loop) == loops.end()) {
      loops.push_back(std::move(*loop));
    }
  }
  return loops;
}

}  // namespace loom::agent
