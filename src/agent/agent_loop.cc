#include "loom/agent/agent_loop.h"

#include <algorithm>

#include "agent/transcript.h"
#include "content/claim_check_envelope.h"
#include "effects/step_ids.h"
#include "loom/agent/approval.h"
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

constexpr int64_t kCheckpointVersion = 1;

class Loop {
 public:
  Loop(workflow::WorkflowContext& ctx, std::string_view name, const AgentOptions& options)
      : ctx_(ctx),
        name_(name),
        options_(options),
        journal_(options.modelInput),
        tools_(toolSpecs(options.tools)),
        budget_(options.budget) {}

  json::value run(const json::value& prompt) {
    json::value answer;
    int64_t first = 1;
    if (const json::value* saved = ctx_.checkpoint(name_)) {
      first = resume(*saved, answer);
    } else {
      if (!options_.system.empty()) append(systemMessage());
      append(json::object{{"role", "user"}, {"content", prompt}});
    }
    for (int64_t turn = first; turn <= options_.maxTurns; ++turn) {
      checkpoint(turn, answer);
      enforceBudget(turn);
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

  // The loop's checkpoint at the start of `turn` (WorkflowContext::setCheckpoint): the turn,
  // the answer so far, the transcript's size and bytes and what the model-input journal holds
  // since the last model step. The previous turn's steps and approval signals are forgotten: a
  // resume from this checkpoint starts here. The transcript itself is not kept: a resumed loop
  // rebuilds it from the log when a model call first needs it (rebuildTranscript).
  void checkpoint(int64_t turn, const json::value& answer) {
    json::object state{{"version", kCheckpointVersion},
                       {"turn", turn},
                       {"answer", answer},
                       {"warned", warned_},
                       {"messages", static_cast<int64_t>(transcript_.size())},
                       {"bytes", transcript_.bytes()},
                       {"pending", journal_.pending()},
                       {"spent", kernel::toJson(spent_)},
                       {"toolCalls", toolCalls_},
                       {"budget", budget_.toJson()}};
    std::string previous = effects::turnStepPrefix(name_, turn - 1);
    ctx_.setCheckpoint(name_, std::move(state),
                       {previous, std::string(kApprovalSignalPrefix) + previous,
                        std::string(kBudgetSignalPrefix) + previous});
  }

  // Goes on from checkpoint `saved`; returns its turn. UnusableCheckpoint when it does not
  // read (the runtime then replays the whole log).
  int64_t resume(const json::value& saved, json::value& answer) {
    try {
      const auto& o = saved.as_object();
      if (json::requireInt(o, "version") != kCheckpointVersion) {
        throw InvalidArgumentError("version " + std::to_string(json::requireInt(o, "version")) +
                                   " is not " + std::to_string(kCheckpointVersion));
      }
      int64_t turn = json::requireInt(o, "turn");
      int64_t messages = json::requireInt(o, "messages");
      int64_t bytes = json::requireInt(o, "bytes");
      const auto& warned = json::require(o, "warned");
      if (turn < 1 || turn > options_.maxTurns || messages < 0 || bytes < 2 || !warned.is_bool()) {
        throw InvalidArgumentError("turn, messages, bytes or warned out of range");
      }
      journal_.restore(json::require(o, "pending"));
      // A checkpoint of a build before budgets keeps no spend: with a budget to enforce the
      // whole log is replayed instead (UnusableCheckpoint); without one nothing needs it.
      if (o.contains("spent") || options_.budget.any()) {
        spent_ = kernel::usageFromJson(json::requireObject(o, "spent"));
        toolCalls_ = json::requireInt(o, "toolCalls");
        budget_ = budgetFromJson(json::require(o, "budget"), "the checkpoint's budget");
      }
      answer = json::require(o, "answer");
      warned_ = warned.get_bool();
      transcript_ = Transcript(messages, bytes, [this, turn, pending = o.at("pending")] {
        return rebuildTranscript(turn, pending);
      });
      return turn;
    } catch (const std::exception& e) {
      throw workflow::UnusableCheckpoint{"the checkpoint of agent loop '" + name_ +
                                         "' in execution '" + ctx_.executionId() +
                                         "' cannot be read: " + e.what()};
    }
  }

  // The transcript at the start of `turn`: the log's model inputs up to that turn, rebuilt as
  // `loom state` does, plus what `pending` says was appended since. The system prompt is the
  // loop's own, not the journaled one (journaling redacts secrets; the live loop sends the
  // prompt as configured). A log that cannot rebuild it (DataLossError: a reference that does
  // not resolve, a model step journaled without its input) is an UnusableCheckpoint: replaying
  // the whole log does not need this rebuild. Other errors (the store unavailable, a sealed
  // event without its key) propagate as they are: a replay of the log would meet them too.
  json::SharedArray rebuildTranscript(int64_t turn, const json::value& pending) const {
    try {
      ModelInputRebuilder rebuilder(name_);
      bool past = false;  // events of `turn` and later are not part of it
      ctx_.history([&](const kernel::Event& e) {
        if (past) return;
        if (e.type == kernel::EventType::kStepCompleted) {
          const auto* stepId = e.data.if_contains("stepId");
          auto id = stepId && stepId->is_string() ? effects::parseAgentStepId(stepId->get_string())
                                                  : std::nullopt;
          if (id && id->loop == name_ && id->turn >= turn) {
            past = true;
            return;
          }
        }
        rebuilder.apply(e);
      });
      json::array messages = std::move(rebuilder).inputAfter(pending);
      if (!options_.system.empty() && !messages.empty() &&
          messages[0].as_object().at("role") == "system") {
        messages[0] = systemMessage();
      }
      return json::SharedArray(std::move(messages));
    } catch (const CorruptEventError&) {
      throw;  // the log itself is wrong: every reader refuses it
    } catch (const DataLossError& e) {
      throw unusableTranscript(turn, e.what());
    } catch (const boost::system::system_error& e) {  // an entry of another shape
      throw unusableTranscript(turn, e.what());
    }
  }

  workflow::UnusableCheckpoint unusableTranscript(int64_t turn, std::string_view why) const {
    return {"the transcript of agent loop '" + name_ + "' at turn " + std::to_string(turn) +
            " cannot be rebuilt from the log: " + std::string(why)};
  }

  json::object systemMessage() const {
    return json::object{{"role", "system"}, {"content", options_.system}};
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
    if (auto usage = ctx_.stepUsage(stepId)) spent_.add(*usage);
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
      toolCalls_ += static_cast<int64_t>(batch.size());
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
    std::string signal = std::string(kApprovalSignalPrefix) + stepId;
    json::value decision;
    if (def.approvalTimeoutMillis > 0) {
      auto given = ctx_.parkUntil("approval", stepId, signal, stepId + ":approvalDeadline",
                                  std::chrono::milliseconds(def.approvalTimeoutMillis));
      if (!given) return onApprovalTimeout(stepId, callId, def);
      decision = std::move(*given);
    } else {
      decision = ctx_.park("approval", stepId, signal);
    }
    // Every door checks a decision's shape before recording it (readApprovalDecision). What
    // is recorded is read as it always was, so a decision recorded before that check, or by a
    // program calling the runtime directly, replays to the same outcome.
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
    if (auto usage = ctx_.stepUsage(stepId)) spent_.add(*usage);
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

  // agent.budget, at the start of `turn`: over a limit, the run parks `budgetExceeded` until
  // signal "budget:<loop>#turn:<turn>:model" raises it (each such park takes the next one), or fails
  // with onExceeded = "fail". What was spent comes from the recorded steps: the same on every
  // replay, so the parks and raises replay as they happened.
  void enforceBudget(int64_t turn) {
    for (;;) {
      std::string over = budget_.exceededBy(spent_, toolCalls_);
      if (over.empty()) return;
      std::string why = "agent '" + name_ + "' is over its budget (agent.budget): " + over;
      if (budget_.onExceeded == "fail") throw FailedPreconditionError(why);
      std::string stepId = effects::modelStepId(name_, turn);
      std::string signal = std::string(kBudgetSignalPrefix) + stepId;
      json::value raise = ctx_.park("budgetExceeded", stepId, signal,
                                    why + "; raise it with `loom signal " + ctx_.executionId() +
                                        " " + signal +
                                        " '{\"maxTokens\": N}'` (or maxCostUsd, "
                                        "maxToolCalls), or cancel the run");
      try {
        budget_ = budgetFromJson(raise, "the payload of signal '" + signal + "'", budget_);
      } catch (const InvalidArgumentError&) {
        // Every door checks a raise before recording it; one recorded otherwise (a program
        // calling the runtime) raises nothing, the same on every replay: it parks again.
      }
    }
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
  AgentBudget budget_;         // agent.budget, as raised by budget signals so far
  kernel::TokenUsage spent_;   // by the model steps of the turns before this one
  int64_t toolCalls_ = 0;      // tool calls run in those turns
};

}  // namespace

json::value agentLoop(workflow::WorkflowContext& ctx, std::string_view name,
                      const AgentOptions& options, const json::value& prompt) {
  if (options.maxTurns < 1) throw InvalidArgumentError("agent maxTurns must be at least 1");
  // Its step ids are `<name>#turn:<i>:...` (effects/step_ids.h); a checkpoint forgets a turn by
  // that prefix, so a name that holds the marker could forget another loop's steps.
  if (name.empty() || name.find("#turn:") != std::string_view::npos) {
    throw InvalidArgumentError("agent loop name '" + std::string(name) +
                               "' must be non-empty and must not contain \"#turn:\"");
  }
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
