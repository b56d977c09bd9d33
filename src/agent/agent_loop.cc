#include "loom/agent/agent_loop.h"

#include <algorithm>

#include "agent/transcript.h"
#include "content/claim_check_envelope.h"
#include "effects/step_ids.h"
#include "loom/agent/model.h"
#include "loom/util/error.h"
#include "loom/workflow/errors.h"

namespace loom::agent {
namespace {

void refuseEnvelope(const json::value& output, std::string_view stepId, std::string_view model) {
  const auto* o = output.if_object();
  if (o && o->contains(content::kClaimCheckKey)) {
    throw FailedPreconditionError(
        "step '" + std::string(stepId) + "': model '" + std::string(model) +
        "' returned a claim-check envelope instead of a message; a model must not be listed in "
        "execution.claimCheck.toolIds (remove '" +
        std::string(model) + "' from it)");
  }
}

json::array toolSpecs(const std::vector<ToolDefinition>& tools) {
  json::array out;
  for (const auto& t : tools) {
    json::object spec{{"name", t.name}, {"description", t.description}};
    if (!t.inputSchema.is_null()) spec["inputSchema"] = t.inputSchema;
    out.push_back(std::move(spec));
  }
  return out;
}

class Loop {
 public:
  Loop(workflow::WorkflowContext& ctx, std::string_view name, const AgentOptions& options)
      : ctx_(ctx),
        name_(name),
        options_(options),
        journal_(options.modelInput),
        tools_(toolSpecs(options.tools)) {}

  json::value run(const json::value& prompt) {
    if (!options_.system.empty())
      append(json::object{{"role", "system"}, {"content", options_.system}});
    append(json::object{{"role", "user"}, {"content", prompt}});
    json::value answer;
    for (int64_t turn = 1; turn <= options_.maxTurns; ++turn) {
      maybeCompact(turn);
      maybeWarn();
      json::value message = callModel(turn);
      const auto* calls = message.as_object().if_contains("toolCalls");
      if (const auto* c = message.as_object().if_contains("content")) answer = *c;
      if (calls == nullptr || calls->as_array().empty()) {
        return outcome("answered", answer, turn);
      }
      runTools(turn, calls->as_array());
    }
    return outcome("maxTurns", answer, options_.maxTurns);
  }

 private:
  static json::value outcome(std::string_view what, json::value answer, int64_t turns) {
    return json::object{{"outcome", what}, {"answer", std::move(answer)}, {"turns", turns}};
  }

  void append(json::value message) {
    journal_.noteAppended(message);
    transcript_.append(std::move(message));
  }

  json::value callModel(int64_t turn) {
    std::string stepId = effects::modelStepId(name_, turn);
    // The model is lent the transcript (an O(1) shared view), never a copy of it; a recorded
    // turn replays without reading its request. Delta journaling reads only what was
    // appended since the last turn, so no work here grows with the transcript (ADR 0007).
    static const json::SharedArray kNoMessages;
    bool recorded = ctx_.recorded(stepId);
    const json::SharedArray& messages = recorded ? kNoMessages : transcript_.messages();
    json::value journaled = journal_.take(stepId, messages);
    json::value request;
    if (!recorded) request = {{"tools", tools_}, {"purpose", "turn"}};
    json::value out =
        ctx_.effect(stepId, options_.model, std::move(request), {&journaled, messages});
    refuseEnvelope(out, stepId, options_.model);
    validateAssistantMessage(out, options_.model);
    journal_.noteAppended(json::object{{"fromStep", stepId}});
    transcript_.append(out);
    return out;
  }

  // A turn's tool calls, in order. Calls that can run (known tool, parsed arguments, approved)
  // run concurrently in batches of up to parallelToolCalls; a call that needs an approval not
  // yet given first runs the batch before it, then parks, exactly as one by one would.
  void runTools(int64_t turn, const json::array& calls) {
    std::vector<workflow::WorkflowContext::EffectCall> batch;
    std::vector<std::string> batchStepIds, batchCallIds;
    auto flush = [&] {
      if (batch.empty()) return;
      int width = static_cast<int>(std::clamp<int64_t>(options_.parallelToolCalls, 1, 64));
      auto outcomes = ctx_.effects(std::move(batch), width);
      for (std::size_t k = 0; k < outcomes.size(); ++k) {
        writeBackOutcome(batchStepIds[k], batchCallIds[k], std::move(outcomes[k]));
      }
      batch.clear();
      batchStepIds.clear();
      batchCallIds.clear();
    };
    for (std::size_t j = 0; j < calls.size(); ++j) {
      const auto& call = calls[j].as_object();
      std::string callId(call.at("id").as_string());
      std::string tool(call.at("name").as_string());
      std::string stepId = effects::toolStepId(name_, turn, static_cast<int64_t>(j));
      json::value arguments = call.contains("arguments") ? call.at("arguments") : json::object{};
      const ToolDefinition* def = find(tool);
      if (def == nullptr) {
        flush();
        append(toolErrorMessage(callId, json::object{{"error", "no tool named '" + tool + "'"}}));
        continue;
      }
      // A provider could not parse the arguments the model wrote (openai_wire.h): the tool
      // does not run; the model is told why and may call it again.
      if (const auto* bad = call.if_contains("argumentsError")) {
        std::string why = bad->is_string() ? std::string(bad->get_string()) : json::toText(*bad);
        std::string error = "tool '" + tool + "' was not called: " + why +
                            "; call it again with a JSON object as arguments";
        flush();
        append(toolErrorMessage(callId, json::object{{"error", error}}));
        continue;
      }
      if (def->requiresApproval) {
        flush();
        if (!approved(stepId, callId, *def)) continue;
      }
      batch.push_back({stepId, tool, std::move(arguments)});
      batchStepIds.push_back(stepId);
      batchCallIds.push_back(callId);
    }
    flush();
  }

  // Parks until `loom signal <id> approve:<stepId> {"approved": bool}`; a denial is written
  // back as the tool's result.
  // With def.approvalTimeoutMillis, a call nobody decided on in time gets onApprovalTimeout.
  bool approved(const std::string& stepId, const std::string& callId, const ToolDefinition& def) {
    std::string signal = "approve:" + stepId;
    json::value decision;
    if (def.approvalTimeoutMillis > 0) {
      auto given = ctx_.parkUntil("approval", stepId, signal, stepId + ":approvalDeadline",
                                  std::chrono::milliseconds(def.approvalTimeoutMillis));
      if (!given) return onApprovalTimeout(stepId, callId, def);
      decision = std::move(*given);
    } else {
      decision = ctx_.park("approval", stepId, signal);
    }
    const auto* o = decision.if_object();
    const auto* ok = o ? o->if_contains("approved") : nullptr;
    if (ok && ok->is_bool() && ok->get_bool()) return true;
    json::object denial{{"denied", true}, {"reason", "a person denied this tool call"}};
    if (o && o->contains("reason")) denial["reason"] = o->at("reason");
    append(toolErrorMessage(callId, std::move(denial)));
    return false;
  }

  bool onApprovalTimeout(const std::string& stepId, const std::string& callId,
                         const ToolDefinition& def) {
    std::string waited = std::to_string(def.approvalTimeoutMillis / 1000) + " s";
    if (def.onApprovalTimeout == "approve") return true;
    if (def.onApprovalTimeout == "fail") {
      throw FailedPreconditionError("tool call '" + stepId + "' (" + def.name +
                                    ") waited for approval longer than " + waited +
                                    " (onApprovalTimeout = \"fail\")");
    }
    append(toolErrorMessage(
        callId, json::object{{"denied", true},
                             {"reason", "nobody approved this tool call within " + waited}}));
    return false;
  }

  void writeBackOutcome(const std::string& stepId, const std::string& callId,
                        workflow::WorkflowContext::EffectOutcome outcome) {
    if (outcome.failure) {
      try {
        std::rethrow_exception(outcome.failure);
      } catch (const workflow::StepFailedError& e) {
        append(toolErrorMessage(callId, json::object{{"error", e.causeMessage()}}));
      }
      return;
    }
    journal_.noteAppended(
        json::object{{"role", "tool"}, {"toolCallId", callId}, {"fromStep", stepId}});
    transcript_.append(writeBack(callId, std::move(outcome.output)));
  }

  void maybeCompact(int64_t turn) {
    if (!options_.compaction || options_.compaction->triggerBytes <= 0) return;
    if (transcript_.bytes() <= options_.compaction->triggerBytes) return;
    int64_t head = options_.system.empty() ? 1 : 2;  // system prompt and the task stay
    int64_t tail = keptTail();
    int64_t n = static_cast<int64_t>(transcript_.size());
    if (n - head - tail < 2) return;  // nothing worth summarizing
    std::string stepId = effects::compactStepId(name_, turn);
    const auto& messages = transcript_.messages();
    json::SharedArray middle(messages.slice(head, n - tail));
    json::value journaled = journal_.compactionInput(messages, head, tail);
    json::value request{{"tools", json::array{}}, {"purpose", "compact"}};
    std::string model =
        options_.compaction->model.empty() ? options_.model : options_.compaction->model;
    json::value out = ctx_.effect(stepId, model, std::move(request), {&journaled, middle});
    refuseEnvelope(out, stepId, model);
    validateAssistantMessage(out, model);
    json::SharedArray next(messages.slice(0, head));
    next.push_back(summaryMessage(out, middle));
    for (int64_t i = n - tail; i < n; ++i) next.push_back(messages[i]);
    transcript_.replace(std::move(next));
    journal_.noteCompaction(stepId, head, tail);
  }

  // Messages of the last keepLastTurns turns: each turn is an assistant message and the tool
  // messages after it.
  int64_t keptTail() const {
    const auto& m = transcript_.messages();
    int64_t turns = 0, i = static_cast<int64_t>(m.size());
    while (i > 0 && turns < options_.compaction->keepLastTurns) {
      --i;
      if (m[i].as_object().at("role").as_string() == "assistant") ++turns;
    }
    return static_cast<int64_t>(m.size()) - i;
  }

  void maybeWarn() {
    if (warned_ || options_.warnTranscriptBytes <= 0 || !options_.onWarn) return;
    if (transcript_.bytes() <= options_.warnTranscriptBytes) return;
    warned_ = true;
    options_.onWarn(stateGrowthWarning(name_, transcript_.bytes(), options_.warnTranscriptBytes));
  }

  const ToolDefinition* find(const std::string& name) const {
    for (const auto& t : options_.tools) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }

  workflow::WorkflowContext& ctx_;
  std::string name_;
  const AgentOptions& options_;
  ModelInputJournal journal_;
  json::array tools_;
  Transcript transcript_;
  bool warned_ = false;
};

}  // namespace

json::value agentLoop(workflow::WorkflowContext& ctx, std::string_view name,
                      const AgentOptions& options, const json::value& prompt) {
  if (options.maxTurns < 1) throw InvalidArgumentError("agent maxTurns must be at least 1");
  return Loop(ctx, name, options).run(prompt);
}

std::string stateGrowthWarning(std::string_view loop, int64_t bytes, int64_t limit) {
  return "agent '" + std::string(loop) + "': the transcript is " + std::to_string(bytes) +
         " bytes, over warnTranscriptBytes (" + std::to_string(limit) +
         "); every model turn re-sends it, so state and log keep growing. Enable compaction "
         "(compaction.triggerBytes) to bound it, and opt in to execution.claimCheck to move "
         "large tool outputs out of the log (docs/claim-check.md).";
}

void registerAgentWorkflow(workflow::WorkflowRegistry& workflows, std::string name,
                           AgentOptions options) {
  std::string loop = name;
  workflows.add(std::move(name), "agent loop",
                [loop, options = std::move(options)](workflow::WorkflowContext& ctx) {
                  const json::value& input = ctx.input();
                  json::value prompt = input;
                  if (const auto* o = input.if_object(); o && o->contains("prompt"))
                    prompt = o->at("prompt");
                  return agentLoop(ctx, loop, options, prompt);
                });
}

}  // namespace loom::agent
