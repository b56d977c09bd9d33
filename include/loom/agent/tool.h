// Tools an agent may call. A tool runs as a `tool` effect under its own name (the effect id),
// so the middleware chain (kill switch, claim-check, redaction, ...) sees it by that name.
// Implementations must be thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "loom/effects/effect_context.h"
#include "loom/effects/task.h"
#include "loom/json/json.h"

namespace loom::agent {

struct ToolDefinition {
  std::string name;  // also the effect id
  std::string description;
  json::value inputSchema;       // JSON Schema of the arguments; null = any object
  bool returnsMedia = false;     // results are {"parts": [...]} rendered as message parts
  bool requiresApproval = false; // the loop parks before running it until a person approves
  // With requiresApproval: how long a call waits for the decision (0: for ever), and what a
  // call nobody decided on in time gets: "deny" (the model is told), "approve" or "fail" (the
  // run fails).
  int64_t approvalTimeoutMillis = 0;
  std::string onApprovalTimeout = "deny";
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual const ToolDefinition& definition() const = 0;
  // Runs the tool. A thrown loom::Error becomes a failed call the model is told about.
  virtual json::value call(const effects::EffectContext& ctx, const json::value& arguments) = 0;
};

// An in-process C++ tool.
class FunctionTool : public Tool {
 public:
  using Fn = std::function<json::value(const effects::EffectContext&, const json::value&)>;
  FunctionTool(ToolDefinition definition, Fn fn)
      : definition_(std::move(definition)), fn_(std::move(fn)) {}
  const ToolDefinition& definition() const override { return definition_; }
  json::value call(const effects::EffectContext& ctx, const json::value& arguments) override {
    return fn_(ctx, arguments);
  }

 private:
  ToolDefinition definition_;
  Fn fn_;
};

// Registers `tool` as a `tool` task under its name.
void registerTool(effects::TaskRegistry& tasks, std::shared_ptr<Tool> tool);

}  // namespace loom::agent
