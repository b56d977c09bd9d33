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

json::object foldAgentState(const std::vector<kernel::Event>& events, std::string_view loop) {
  json::array frames, turnOutputs, decisions, sawTaintFrom;
  ModelInputRebuilder inputs(loop);  // streams: one transcript, never every turn's input
  for (const auto& e : events) {
    inputs.apply(e);
    if (!readableStep(e)) continue;  // sealed or erased steps have nothing to fold
    const auto& d = e.data;
    auto id = effects::parseAgentStepId(std::string_view(d.at("stepId").as_string()));
    if (!id || id->loop != loop) continue;
    if (id->kind == AgentStepKind::kTool) {
      frames.push_back(frameOf(d, *id));
      addOrigins(sawTaintFrom, d.at("output"));
    } else if (id->kind == AgentStepKind::kModel) {
      turnOutputs.push_back(d.at("output"));
      decisions.push_back(decisionOf(d.at("output"), id->turn));
    } else {
      decisions.push_back(json::object{{"turn", id->turn}, {"decision", "compact"},
                                       {"why", "the transcript passed compaction.triggerBytes"}});
    }
  }
  int64_t bytes = inputs.lastModelStep().empty() ? 0 : transcriptBytes(inputs.lastInput());
  return json::object{{"loop", loop},
                      {"frames", std::move(frames)},
                      {"turnOutputs", std::move(turnOutputs)},
                      {"_decisions", std::move(decisions)},
                      {"transcriptBytes", bytes},
                      {"sawTaintFrom", std::move(sawTaintFrom)}};
}

std::vector<std::string> agentLoopsOf(const std::vector<kernel::Event>& events) {
  std::vector<std::string> loops;
  for (const auto& e : events) {
    if (!readableStep(e)) continue;
    auto id = effects::parseAgentStepId(std::string_view(e.data.at("stepId").as_string()));
    if (id && std::find(loops.begin(), loops.end(), id->loop) == loops.end()) {
      loops.push_back(id->loop);
    }
  }
  return loops;
}

}  // namespace loom::agent
