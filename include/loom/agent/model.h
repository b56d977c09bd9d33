// Model SPI. A model turns a request into one assistant message. It runs as an `llm` effect
// under its own id, so it goes through the middleware chain and is journaled like any step.
//
// Request:  ModelRequest: the messages, lent (an immutable shared view, never copied per turn:
//           docs/adr/0007-lent-transcript.md), the tools [{"name","description","inputSchema"}]
//           and the purpose, "turn" or "compact". Through the chain the effect's JSON input is
//           {"tools", "purpose"} and the messages travel in EffectContext::lentMessages; a
//           caller that lends nothing passes {"messages": [...], ...} as JSON instead.
// Response: {"role": "assistant", "content": string|null?, "toolCalls"?: [{"id","name",
//            "arguments"}], "finishReason"?: string, "usage"?: {"inputTokens","outputTokens"}}
// Messages are {"role": "system"|"user"|"assistant"|"tool", ...} (docs/spec/agent-state.md).
// Implementations must be thread-safe: one model serves many executions at once.
#pragma once

#include <memory>
#include <string>

#include "loom/effects/effect_context.h"
#include "loom/effects/task.h"
#include "loom/json/json.h"
#include "loom/json/shared_array.h"

namespace loom::agent {

struct ModelRequest {
  json::SharedArray messages;  // lent: copying the request copies no message
  json::array tools;           // [{"name","description","inputSchema"?}]
  std::string purpose = "turn";

  // The request an `llm` effect was invoked with: its input's "messages" when it has them
  // (a caller that does not lend, or a middleware that rewrote them as JSON), else the
  // messages lent in ctx. Throws InvalidArgumentError naming the member of a malformed input.
  static ModelRequest of(const effects::EffectContext& ctx, json::value input);
  // {"messages": [...], "tools": [...], "purpose": ...}, copying the messages.
  json::value toJson() const;
};

class Model {
 public:
  virtual ~Model() = default;
  // The effect id the model is registered and journaled under ("scripted", "openai:gpt-4o").
  virtual const std::string& id() const = 0;
  // One completion. Throws loom::Error subclasses (UnavailableError for retryable faults).
  virtual json::value complete(const effects::EffectContext& ctx, const ModelRequest& request) = 0;
};

// Registers `model` as an `llm` task under model->id(); the registry's task shares ownership
// of it.
void registerModel(effects::TaskRegistry& tasks, std::shared_ptr<Model> model);

// Checks a model response's shape; throws InvalidArgumentError naming what is wrong.
void validateAssistantMessage(const json::value& message, std::string_view modelId);

}  // namespace loom::agent
