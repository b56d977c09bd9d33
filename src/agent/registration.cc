#include "loom/agent/model.h"
#include "loom/agent/tool.h"
#include "loom/util/error.h"

namespace loom::agent {

void registerModel(effects::TaskRegistry& tasks, std::shared_ptr<Model> model) {
  effects::TaskDefinition def{model->id(), std::string(effects::kKindLlm), false,
                              "model " + model->id(), nullptr};
  tasks.add(std::move(def), [model](const effects::EffectContext& ctx, json::value input) {
    return model->complete(ctx, ModelRequest::of(ctx, std::move(input)));
  });
}

ModelRequest ModelRequest::of(const effects::EffectContext& ctx, json::value input) {
  auto* o = input.if_object();
  if (o == nullptr) {
    throw InvalidArgumentError("a model request is a JSON object, not a " +
                               std::string(json::kindName(input)));
  }
  ModelRequest r;
  if (auto* m = o->if_contains("messages")) {
    if (!m->is_array())
      throw InvalidArgumentError("a model request's \"messages\" is not an array");
    r.messages = json::SharedArray(std::move(m->get_array()));
  } else {
    r.messages = ctx.lentMessages;
  }
  if (auto* t = o->if_contains("tools"); t && !t->is_null()) {
    if (!t->is_array()) throw InvalidArgumentError("a model request's \"tools\" is not an array");
    r.tools = std::move(t->get_array());
  }
  if (auto* p = o->if_contains("purpose"); p && !p->is_null()) {
    if (!p->is_string())
      throw InvalidArgumentError("a model request's \"purpose\" is not a string");
    r.purpose = std::string(p->get_string());
  }
  return r;
}

json::value ModelRequest::toJson() const {
  return json::object{{"messages", messages.toArray()}, {"tools", tools}, {"purpose", purpose}};
}

void registerTool(effects::TaskRegistry& tasks, std::shared_ptr<Tool> tool) {
  const ToolDefinition& d = tool->definition();
  effects::TaskDefinition def{d.name, std::string(effects::kKindTool), d.returnsMedia,
                              d.description, d.inputSchema};
  tasks.add(std::move(def), [tool](const effects::EffectContext& ctx, json::value arguments) {
    return tool->call(ctx, arguments);
  });
}

void validateAssistantMessage(const json::value& message, std::string_view modelId) {
  auto bad = [&](const std::string& what) {
    throw InvalidArgumentError("model '" + std::string(modelId) + "' returned " + what);
  };
  const auto* o = message.if_object();
  if (o == nullptr) bad("a " + std::string(json::kindName(message)) + ", not a message object");
  const auto* role = o->if_contains("role");
  if (role == nullptr || !role->is_string() || role->get_string() != "assistant") {
    bad("a message whose role is not \"assistant\"");
  }
  if (const auto* calls = o->if_contains("toolCalls")) {
    if (!calls->is_array()) bad("toolCalls that is not an array");
    for (const auto& c : calls->get_array()) {
      const auto* call = c.if_object();
      if (call == nullptr || !call->contains("id") || !call->at("id").is_string() ||
          !call->contains("name") || !call->at("name").is_string()) {
        bad("a tool call without a string id and name");
      }
    }
  }
}

}  // namespace loom::agent
