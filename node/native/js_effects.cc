// Tools, models and agents written in JavaScript, and the shipped models, registered as the
// core's tasks so that the chain and the journal treat them as C++ ones. A tool is called as
// fn(args, ctx); a model object as complete(request, ctx); either may be async. Each call runs
// on a core thread that waits for the promise (the JavaScript thread never waits). A thrown
// error or a rejected promise fails that call as a C++ exception would.
#include <algorithm>
#include <map>

#include "js_app.h"
#include "loom/agent/agent_loop.h"
#include "loom/effects/taint.h"
#include "loom/providers/mcp_client.h"
#include "loom/providers/openai_model.h"
#include "loom/providers/scripted_model.h"
#include "loom/util/error.h"

namespace loom::node {
namespace {

class JsTool : public agent::Tool {
 public:
  JsTool(std::shared_ptr<Door> door, agent::ToolDefinition d, bool untrusted, SharedFn fn)
      : door_(std::move(door)), definition_(std::move(d)), untrusted_(untrusted), fn_(std::move(fn)) {}
  const agent::ToolDefinition& definition() const override { return definition_; }
  json::value call(const effects::EffectContext& ctx, const json::value& arguments) override {
    auto channel = std::make_shared<Channel>();
    json::value result = callJs(*door_, channel, "tool '" + definition_.name + "'",
                                [this, &ctx, &arguments](Napi::Env env) -> Napi::Value {
                                  return fn_->Call({toJs(env, arguments), effectContextObject(env, ctx)});
                                });
    if (untrusted_) return effects::tainted(std::move(result), "tool:" + definition_.name);
    return result;
  }

 private:
  std::shared_ptr<Door> door_;
  agent::ToolDefinition definition_;
  bool untrusted_;
  SharedFn fn_;
};

// The JavaScript copies of agents' transcripts, kept between turns (as the Python package's
// TranscriptCache, python/native/py_transcript.h): the loop lends turn k the messages of turn
// k-1 plus what was appended, in storage that never moves, so per execution the converted
// array is kept with the SharedArray it came from and the next turn converts only the messages
// past the longest prefix of the very same values. A model gets a fresh array of fresh message
// objects each turn (shallow copies: a value nested in a message is shared with later turns, so
// a model must not change one in place). At most kMaxRuns executions, least recently used out.
// Used on the JavaScript thread only.
class TranscriptCache {
 public:
  static constexpr std::size_t kMaxRuns = 256;
  explicit TranscriptCache(std::shared_ptr<Door> door) : door_(std::move(door)) {}

  Napi::Array messages(Napi::Env env, const std::string& executionId, const json::SharedArray& lent) {
    Entry& entry = runs_[executionId];
    entry.used = ++clock_;
    std::size_t reuse = 0;
    Napi::Array old;
    if (entry.converted) {
      old = entry.converted->Value().As<Napi::Array>();
      std::size_t have = std::min<std::size_t>({entry.lent.size(), lent.size(), old.Length()});
      while (reuse < have && &entry.lent[reuse] == &lent[reuse]) ++reuse;
    }
    Napi::Array out = Napi::Array::New(env, lent.size());
    for (std::size_t i = 0; i < lent.size(); ++i) {
      out.Set(i, i < reuse ? old.Get(i) : toJs(env, lent[i]));
    }
    entry.lent = lent;
    entry.converted = keepObject(door_, out);
    if (runs_.size() > kMaxRuns) {
      auto oldest = std::min_element(runs_.begin(), runs_.end(), [](const auto& a, const auto& b) {
        return a.second.used < b.second.used;
      });
      runs_.erase(oldest);
    }
    Napi::Function assign = env.Global().Get("Object").As<Napi::Object>().Get("assign").As<Napi::Function>();
    Napi::Array mine = Napi::Array::New(env, lent.size());
    for (uint32_t i = 0; i < out.Length(); ++i) {
      Napi::Value m = out.Get(i);
      mine.Set(i, m.IsObject() && !m.IsArray() ? assign.Call({Napi::Object::New(env), m}) : m);
    }
    return mine;
  }

 private:
  struct Entry {
    json::SharedArray lent;
    SharedObject converted;  // the JavaScript array of lent's messages
    uint64_t used = 0;
  };
  std::shared_ptr<Door> door_;
  std::map<std::string, Entry> runs_;
  uint64_t clock_ = 0;
};

class JsModel : public agent::Model {
 public:
  JsModel(std::shared_ptr<Door> door, std::string id, SharedObject model)
      : door_(std::move(door)), id_(std::move(id)), model_(std::move(model)),
        transcripts_(std::make_shared<TranscriptCache>(door_)) {}
  const std::string& id() const override { return id_; }
  json::value complete(const effects::EffectContext& ctx, const agent::ModelRequest& request) override {
    auto channel = std::make_shared<Channel>();
    json::value message = callJs(*door_, channel, "model '" + id_ + "'",
                                 [this, &ctx, &request](Napi::Env env) -> Napi::Value {
                                   Napi::Object m = model_->Value();
                                   return m.Get("complete").As<Napi::Function>().Call(
                                       m, {requestObject(env, ctx, request), effectContextObject(env, ctx)});
                                 });
    agent::validateAssistantMessage(message, id_);
    return message;
  }

 private:
  // {messages, tools, purpose}; the messages through the cache.
  Napi::Object requestObject(Napi::Env env, const effects::EffectContext& ctx,
                             const agent::ModelRequest& request) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("messages", transcripts_->messages(env, ctx.executionId, request.messages));
    o.Set("tools", toJs(env, json::value(request.tools)));
    o.Set("purpose", request.purpose);
    return o;
  }

  std::shared_ptr<Door> door_;
  std::string id_;
  SharedObject model_;
  // Touched on the JavaScript thread only; its references are freed there (keepObject).
  std::shared_ptr<TranscriptCache> transcripts_;
};

int64_t intOption(Napi::Object o, const char* key, int64_t fallback) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().Int64Value() : fallback;
}

}  // namespace

Napi::Object effectContextObject(Napi::Env env, const effects::EffectContext& c) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("executionId", c.executionId);
  o.Set("stepId", c.stepId);
  o.Set("effectId", c.effectId);
  o.Set("taskKind", c.taskKind);
  o.Set("subject", c.subject ? Napi::Value(Napi::String::New(env, *c.subject)) : env.Null());
  o.Set("attempt", c.attempt);
  o.Set("transient", c.transient);
  return o;
}

std::shared_ptr<agent::Tool> jsTool(const std::shared_ptr<Door>& door, agent::ToolDefinition d,
                                    bool untrusted, SharedFn fn) {
  return std::make_shared<JsTool>(door, std::move(d), untrusted, std::move(fn));
}

void addTool(Core& core, agent::ToolDefinition d, bool untrusted, Napi::Function fn) {
  core.beforeRegistering("tool '" + d.name + "'");
  agent::registerTool(core.tasks, jsTool(core.door, d, untrusted, keepFn(core.door, fn)));
  core.tools[d.name] = d;
}

std::shared_ptr<agent::Model> jsModel(const std::shared_ptr<Door>& door, std::string id,
                                      SharedObject model) {
  return std::make_shared<JsModel>(door, std::move(id), std::move(model));
}

void addModel(Core& core, std::shared_ptr<agent::Model> model) {
  auto it = core.models.find(model->id());
  if (it != core.models.end() && it->second == model) return;  // one model, several agents
  core.beforeRegistering("model '" + model->id() + "'");
  if (core.tasks.find(model->id()) != nullptr) {
    throw AlreadyExistsError("a model or tool named '" + model->id() +
                             "' is registered already; give this model an id of its own");
  }
  agent::registerModel(core.tasks, model);
  core.models[model->id()] = std::move(model);
}

void addAgent(Core& core, const std::string& name, Napi::Object o) {
  core.beforeRegistering("agent '" + name + "'");
  agent::registerAgentWorkflow(core.workflows, name, agentOptionsOf(core, name, o));
}

std::vector<std::string> addMcpServer(Core& core, Napi::Object o) {
  providers::McpServerOptions options;
  options.name = o.Get("name").ToString().Utf8Value();
  core.beforeRegistering("MCP server '" + options.name + "'");
  options.command = o.Get("command").ToString().Utf8Value();
  if (o.Get("args").IsArray()) {
    Napi::Array a = o.Get("args").As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) options.args.push_back(a.Get(i).ToString().Utf8Value());
  }
  if (o.Get("env").IsObject()) {
    Napi::Object env = o.Get("env").As<Napi::Object>();
    Napi::Array keys = env.GetPropertyNames();
    for (uint32_t i = 0; i < keys.Length(); ++i) {
      std::string k = keys.Get(i).ToString().Utf8Value();
      options.env[k] = env.Get(k).ToString().Utf8Value();
    }
  }
  if (o.Get("inheritEnv").IsBoolean()) options.inheritEnv = o.Get("inheritEnv").ToBoolean().Value();
  if (o.Get("workingDirectory").IsString()) options.workingDirectory = o.Get("workingDirectory").ToString().Utf8Value();
  options.timeoutMillis = intOption(o, "timeoutMs", options.timeoutMillis);
  auto client = providers::registerMcpServer(core.tasks, std::move(options));
  std::vector<std::string> names;
  for (const auto& d : client->toolDefinitions()) {
    core.tools[d.name] = d;
    names.push_back(d.name);
  }
  core.servers.push_back(std::move(client));
  return names;
}

agent::AgentOptions agentOptionsOf(const Core& core, const std::string& name, Napi::Object o) {
  agent::AgentOptions options;
  options.model = o.Get("model").ToString().Utf8Value();
  Napi::Array tools = o.Has("tools") ? o.Get("tools").As<Napi::Array>() : Napi::Array::New(o.Env());
  for (uint32_t i = 0; i < tools.Length(); ++i) {
    std::string tool = tools.Get(i).ToString().Utf8Value();
    auto it = core.tools.find(tool);
    if (it == core.tools.end()) {
      throw NotFoundError("agent '" + name + "' offers tool '" + tool +
                          "', which is not registered; register it with app.tool() first");
    }
    options.tools.push_back(it->second);
  }
  if (o.Get("system").IsString()) options.system = o.Get("system").ToString().Utf8Value();
  options.maxTurns = intOption(o, "maxTurns", 50);
  options.parallelToolCalls = intOption(o, "parallelToolCalls", 4);
  if (options.maxTurns < 1) throw InvalidArgumentError("agent '" + name + "': maxTurns must be >= 1");
  if (options.parallelToolCalls < 1 || options.parallelToolCalls > 64) {
    throw InvalidArgumentError("agent '" + name + "': parallelToolCalls must be 1 to 64");
  }
  options.modelInput = agent::modelInputModeFromName(core.config->execution.journal.modelInput);
  options.onWarn = core.config->observability.onWarn;
  if (o.Has("budget") && !o.Get("budget").IsUndefined()) {
    options.budget =
        agent::budgetFromJson(toJson(o.Get("budget"), "the budget"), "agent '" + name + "': budget");
  }
  return options;
}

Napi::Object initEffects(Napi::Env env, Napi::Object exports) {
  exports.Set("scriptedModel", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
    try {
      auto model = std::make_shared<providers::ScriptedModel>(
          info[0].ToString().Utf8Value(), toJson(info[1], "the model script"),
          info[2].ToString().Utf8Value());
      return Napi::External<std::shared_ptr<agent::Model>>::New(
          info.Env(), new std::shared_ptr<agent::Model>(model),
          [](Napi::Env, std::shared_ptr<agent::Model>* p) { delete p; });
    } catch (const std::exception&) {
      Napi::Value e = errorToJs(info.Env(), std::current_exception());
      throw Napi::Error(info.Env(), e);
    }
  }));
  exports.Set("openaiModel", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
    try {
      Napi::Object o = info[0].As<Napi::Object>();
      providers::OpenAiModelOptions opts;
      opts.baseUrl = o.Get("baseUrl").ToString().Utf8Value();
      opts.model = o.Get("model").ToString().Utf8Value();
      if (o.Get("id").IsString()) opts.id = o.Get("id").ToString().Utf8Value();
      if (o.Get("apiKeyEnv").IsString()) opts.apiKeyEnv = o.Get("apiKeyEnv").ToString().Utf8Value();
      opts.timeoutMillis = intOption(o, "timeoutMs", opts.timeoutMillis);
      opts.maxRetries = static_cast<int>(intOption(o, "maxRetries", opts.maxRetries));
      if (o.Get("extraBody").IsObject()) {
        json::value extra = toJson(o.Get("extraBody"), "extraBody");
        if (extra.is_object()) opts.extraBody = extra.get_object();
      }
      std::shared_ptr<agent::Model> model = std::make_shared<providers::OpenAiModel>(std::move(opts));
      return Napi::External<std::shared_ptr<agent::Model>>::New(
          info.Env(), new std::shared_ptr<agent::Model>(model),
          [](Napi::Env, std::shared_ptr<agent::Model>* p) { delete p; });
    } catch (const std::exception&) {
      throw Napi::Error(info.Env(), errorToJs(info.Env(), std::current_exception()));
    }
  }));
  exports.Set("modelId", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
    auto* model = info[0].As<Napi::External<std::shared_ptr<agent::Model>>>().Data();
    return Napi::String::New(info.Env(), (*model)->id());
  }));
  return exports;
}

}  // namespace loom::node
