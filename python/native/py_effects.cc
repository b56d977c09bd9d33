// Tools, models, middleware and agents written in Python, and the shipped models, registered
// as the core's tasks and layers so that the chain (kill switch, claim-check, redaction, the
// app's effectMiddleware) and the journal treat them exactly as C++ ones.
//  - A tool is called with its arguments as keyword arguments; its result must be JSON (else
//    the call fails naming where and what, and the model is told); an untrusted tool's result
//    is recorded tainted ("tool:<name>"), as a loom.toml tool's.
//  - A model object's complete(request) gets {"messages", "tools", "purpose"} and returns the
//    assistant message; a malformed one fails the turn naming the model and the member.
//  - A middleware object's invoke(ctx, input, next) sees the EffectContext and calls next.
#include <pybind11/stl.h>

#include "loom/agent/agent_loop.h"
#include "loom/agent/model.h"
#include "loom/agent/tool.h"
#include "loom/effects/taint.h"
#include "loom/providers/mcp_client.h"
#include "loom/providers/openai_model.h"
#include "loom/providers/scripted_model.h"
#include "py_app.h"
#include "py_callbacks.h"
#include "py_errors.h"
#include "py_json.h"
#include "py_transcript.h"

namespace loom::python {
namespace {

class PyTool : public agent::Tool {
 public:
  PyTool(agent::ToolDefinition definition, bool untrusted, py::object fn)
      : definition_(std::move(definition)), untrusted_(untrusted), fn_(keep(std::move(fn))) {}
  const agent::ToolDefinition& definition() const override { return definition_; }
  json::value call(const effects::EffectContext&, const json::value& arguments) override {
    std::string where = "tool '" + definition_.name + "'";
    json::value result = withGil(where, [&] {
      py::object out;
      if (arguments.is_object()) {
        out = fn_->get()(**py::reinterpret_steal<py::dict>(toPython(arguments).release()));
      } else {
        out = fn_->get()(toPython(arguments));
      }
      return toJson(settled(std::move(out)), "the result of " + where);
    });
    if (untrusted_) return effects::tainted(std::move(result), "tool:" + definition_.name);
    return result;
  }

 private:
  agent::ToolDefinition definition_;
  bool untrusted_;
  SharedPy fn_;
};

class PyModel : public agent::Model {
 public:
  PyModel(std::string id, py::object model, bool takesContext)
      : id_(std::move(id)), model_(keep(std::move(model))), takesContext_(takesContext) {}
  const std::string& id() const override { return id_; }
  json::value complete(const effects::EffectContext& ctx,
                       const agent::ModelRequest& request) override {
    std::string where = "model '" + id_ + "'";
    json::value message = withGil(where, [&] {
      py::dict r;
      r["messages"] = transcripts_.messages(ctx.executionId, request.messages);
      r["tools"] = toPython(json::value(request.tools));
      r["purpose"] = request.purpose;
      py::object complete = model_->get().attr("complete");
      py::object out = takesContext_ ? complete(r, ctx) : complete(r);
      return toJson(settled(std::move(out)), "the response of " + where);
    });
    agent::validateAssistantMessage(message, id_);
    return message;
  }

 private:
  std::string id_;
  SharedPy model_;
  bool takesContext_;
  TranscriptCache transcripts_;  // GUARDED_BY(the GIL)
};

// `next` of a Python middleware: valid during its invoke (`live` is cleared when it returns).
struct PyNext {
  const effects::Next* next;
  const effects::EffectContext* ctx;
  std::shared_ptr<bool> live;  // GUARDED_BY(the GIL)
  py::object operator()(py::handle input) const {
    return guarded([&] {
      if (!*live) {
        throw FailedPreconditionError(
            "a middleware's next was called after its invoke returned; call next only inside "
            "invoke");
      }
      json::value in = toJson(input, "the input a middleware passed to next");
      json::value out;
      {
        py::gil_scoped_release release;
        out = (*next)(*ctx, std::move(in));
      }
      return toPython(out);
    });
  }
};

class PyMiddleware : public effects::Middleware {
 public:
  PyMiddleware(std::string name, py::object middleware)
      : name_(std::move(name)), middleware_(keep(std::move(middleware))) {}
  std::string_view name() const override { return name_; }
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override {
    std::string where = "middleware '" + name_ + "'";
    return withGil(where, [&] {
      auto live = std::make_shared<bool>(true);
      struct Expire {
        std::shared_ptr<bool> live;
        ~Expire() { *live = false; }
      } expire{live};
      py::object out = settled(middleware_->get().attr("invoke")(ctx, toPython(input),
                                                                  PyNext{&next, &ctx, live}));
      return toJson(out, "the result of " + where);
    });
  }

 private:
  std::string name_;
  SharedPy middleware_;
};

void addTool(NativeApp& app, agent::ToolDefinition d, bool untrusted, py::object fn) {
  guarded([&] {
    if (d.onApprovalTimeout != "deny" && d.onApprovalTimeout != "approve" &&
        d.onApprovalTimeout != "fail") {
      throw InvalidArgumentError("tool '" + d.name + "': on_approval_timeout must be \"deny\", "
                                 "\"approve\" or \"fail\", not \"" + d.onApprovalTimeout + "\"");
    }
    if (d.approvalTimeoutMillis < 0) {
      throw InvalidArgumentError("tool '" + d.name + "': approval_timeout_ms must be >= 0");
    }
    app.beforeRegistering("tool '" + d.name + "'");
    agent::registerTool(app.tasks(), pythonTool(d, untrusted, std::move(fn)));
    app.tools()[d.name] = d;
  });
}

void addModel(NativeApp& app, std::shared_ptr<agent::Model> model) {
  guarded([&] {
    if (app.hasModel(model)) return;  // one model, several agents
    app.beforeRegistering("model '" + model->id() + "'");
    if (app.tasks().find(model->id()) != nullptr) {
      throw AlreadyExistsError("a model or tool named '" + model->id() +
                               "' is registered already; give this model an id of its own "
                               "(ScriptedModel(..., id=...), loom.model(obj, id=...))");
    }
    agent::registerModel(app.tasks(), model);
    app.keepModel(std::move(model));
  });
}

// Starts an MCP server (stdio) and registers its tools; returns their names.
std::vector<std::string> addMcpServer(NativeApp& app, providers::McpServerOptions options) {
  return guarded([&] {
    app.beforeRegistering("MCP server '" + options.name + "'");
    std::shared_ptr<providers::McpClient> client;
    {
      py::gil_scoped_release release;
      client = providers::registerMcpServer(app.tasks(), std::move(options));
    }
    std::vector<std::string> names;
    for (const auto& d : client->toolDefinitions()) {
      app.tools()[d.name] = d;
      names.push_back(d.name);
    }
    app.keepServer(std::move(client));
    return names;
  });
}

// {"trigger_bytes", "keep_last_turns", "model"}; anything else is refused, naming it.
agent::CompactionOptions compactionOf(const std::string& agent, const json::value& c) {
  std::string at = "agent '" + agent + "': compaction";
  if (!c.is_object()) throw InvalidArgumentError(at + " must be a dict");
  agent::CompactionOptions o;
  for (const auto& [key, value] : c.get_object()) {
    bool count = key == "trigger_bytes" || key == "keep_last_turns";
    if (count && (!value.is_int64() || value.get_int64() < 0)) {
      throw InvalidArgumentError(at + "." + std::string(key) + " must be an int >= 0");
    }
    if (key == "trigger_bytes") o.triggerBytes = value.get_int64();
    else if (key == "keep_last_turns") o.keepLastTurns = value.get_int64();
    else if (key == "model" && value.is_string()) o.model = std::string(value.get_string());
    else throw InvalidArgumentError(at + ": unknown or mistyped key '" + std::string(key) +
                                    "'; expected trigger_bytes, keep_last_turns or model");
  }
  return o;
}

void addAgent(NativeApp& app, std::string name, std::string modelId,
              std::vector<std::string> toolNames, std::string system, int64_t maxTurns,
              int64_t parallelToolCalls, py::object compaction, int64_t warnTranscriptBytes,
              py::object budget) {
  guarded([&] {
    app.beforeRegistering("agent '" + name + "'");
    agent::AgentOptions o;
    o.model = modelId;
    for (const auto& tool : toolNames) {
      auto it = app.tools().find(tool);
      if (it == app.tools().end()) {
        throw NotFoundError("agent '" + name + "' offers tool '" + tool +
                            "', which is not registered; register it with @app.tool first");
      }
      o.tools.push_back(it->second);
    }
    o.system = std::move(system);
    o.maxTurns = maxTurns;
    o.parallelToolCalls = parallelToolCalls;
    o.modelInput = agent::modelInputModeFromName(app.config()->execution.journal.modelInput);
    if (!compaction.is_none()) o.compaction = compactionOf(name, toJson(compaction, "compaction"));
    o.warnTranscriptBytes = warnTranscriptBytes;
    o.onWarn = app.config()->observability.onWarn;
    if (!budget.is_none()) {
      o.budget = agent::budgetFromJson(toJson(budget, "budget"), "agent '" + name + "': budget");
    }
    if (maxTurns < 1) throw InvalidArgumentError("agent '" + name + "': max_turns must be >= 1");
    if (parallelToolCalls < 1 || parallelToolCalls > 64) {
      throw InvalidArgumentError("agent '" + name + "': parallel_tool_calls must be 1 to 64");
    }
    agent::registerAgentWorkflow(app.workflows(), name, std::move(o));
  });
}

}  // namespace

std::shared_ptr<effects::Middleware> pythonMiddleware(py::object middleware) {
  std::string name = py::str(py::hasattr(middleware, "name")
                                 ? middleware.attr("name")
                                 : py::type::handle_of(middleware).attr("__name__"));
  return std::make_shared<PyMiddleware>(std::move(name), std::move(middleware));
}

std::shared_ptr<agent::Model> pythonModel(std::string id, py::object model, bool takesContext) {
  return std::make_shared<PyModel>(std::move(id), std::move(model), takesContext);
}

std::shared_ptr<agent::Tool> pythonTool(agent::ToolDefinition definition, bool untrusted,
                                        py::object fn) {
  return std::make_shared<PyTool>(std::move(definition), untrusted, std::move(fn));
}

void bindEffects(py::module_& m) {
  py::class_<effects::EffectContext>(m, "EffectContext")
      .def_readonly("execution_id", &effects::EffectContext::executionId)
      .def_readonly("step_id", &effects::EffectContext::stepId)
      .def_readonly("effect_id", &effects::EffectContext::effectId)
      .def_readonly("task_kind", &effects::EffectContext::taskKind)
      .def_readonly("subject", &effects::EffectContext::subject)
      .def_readonly("attempt", &effects::EffectContext::attempt)
      .def_readonly("transient", &effects::EffectContext::transient);
  py::class_<PyNext>(m, "Next").def("__call__", &PyNext::operator());
  py::class_<agent::Model, std::shared_ptr<agent::Model>>(m, "Model")
      .def_property_readonly("id", &agent::Model::id);
  m.def("scripted_model", [](std::string id, py::handle script, std::string origin) {
    return guarded([&] {
      json::value s = toJson(script, "the model script");
      return std::static_pointer_cast<agent::Model>(
          std::make_shared<providers::ScriptedModel>(id, std::move(s), origin));
    });
  });
  m.def("load_model_script", [](std::string path) {
    return guarded([&] { return toPython(providers::ScriptedModel::loadScript(path)); });
  });
  m.def("openai_model", [](std::string baseUrl, std::string model, std::string id,
                           std::string apiKeyEnv, int64_t timeoutMs, int maxRetries,
                           std::map<std::string, std::string> headers, py::handle extraBody) {
    return guarded([&] {
      providers::OpenAiModelOptions o;
      o.baseUrl = baseUrl, o.model = model, o.id = id, o.apiKeyEnv = apiKeyEnv;
      o.timeoutMillis = timeoutMs, o.maxRetries = maxRetries, o.headers = headers;
      json::value extra = toJson(extraBody, "extra_body");
      if (extra.is_object()) o.extraBody = extra.get_object();
      return std::static_pointer_cast<agent::Model>(
          std::make_shared<providers::OpenAiModel>(std::move(o)));
    });
  });
  m.def("python_model", &pythonModel);
  m.def("add_model", &addModel);
  m.def("add_tool", [](NativeApp& app, std::string name, std::string description,
                       py::handle schema, bool requiresApproval, int64_t approvalTimeoutMs,
                       std::string onApprovalTimeout, bool untrusted, bool returnsMedia,
                       py::object fn) {
    agent::ToolDefinition d;
    d.name = name, d.description = description;
    d.inputSchema = guarded([&] { return toJson(schema, "the parameters of tool '" + name + "'"); });
    d.requiresApproval = requiresApproval, d.approvalTimeoutMillis = approvalTimeoutMs;
    d.onApprovalTimeout = onApprovalTimeout, d.returnsMedia = returnsMedia;
    addTool(app, std::move(d), untrusted, std::move(fn));
  });
  m.def("add_agent", &addAgent);
  m.def("add_mcp_server", [](NativeApp& app, std::string name, std::string command,
                             std::vector<std::string> args, std::map<std::string, std::string> env,
                             bool inheritEnv, std::string workingDirectory, int64_t timeoutMs) {
    providers::McpServerOptions o;
    o.name = name, o.command = command, o.args = args, o.env = env;
    o.inheritEnv = inheritEnv, o.workingDirectory = workingDirectory;
    o.timeoutMillis = timeoutMs;
    return addMcpServer(app, std::move(o));
  });
}

}  // namespace loom::python
