// The addon's App (node/index.mjs's App wraps it): the registries a Node.js program fills
// (workflows, tools, models, agents), its validated Config and home, and the operations,
// which run the `loom` command line's subcommands in process (cli::invoke) on threads of
// their own, as the Python package does (ADR 0027, ADR 0028). Internal to the addon.
#pragma once

#include <napi.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "host/home_session.h"
#include "js_bridge.h"
#include "loom/agent/agent_loop.h"
#include "loom/agent/model.h"
#include "loom/agent/tool.h"
#include "loom/app/config.h"
#include "loom/effects/effect_context.h"
#include "loom/effects/task.h"
#include "loom/workflow/workflow.h"

namespace loom::node {

// What the core threads share with the App object: outlives it while runs use it.
struct Core {
  std::shared_ptr<const app::Config> config;
  std::string home;
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  std::map<std::string, agent::ToolDefinition, std::less<>> tools;
  std::map<std::string, std::shared_ptr<agent::Model>, std::less<>> models;
  std::vector<std::shared_ptr<void>> servers;  // MCP clients, stopped when the app goes
  std::shared_ptr<Door> door;
  std::atomic<bool> started{false};
  int runningWorkers = 0;  // the event loop's: the Door is referenced while it is not 0

  // A worker started or stopped (on the event loop): the process stays alive while one runs.
  void workerStarted(Napi::Env env) {
    if (runningWorkers++ == 0) door->ref(env);
  }
  void workerStopped(Napi::Env env) {
    if (--runningWorkers == 0) door->unref(env);
  }

  void beforeRegistering(const std::string& what) const;
  // A session's options as this app opens its home: the database environment, then the home
  // given to new App(..., {home}) if any.
  void applyHome(host::HomeOptions& options) const;
};

// A JavaScript function the core keeps: deleted on the JavaScript thread, whoever drops it.
using SharedFn = std::shared_ptr<Napi::FunctionReference>;
SharedFn keepFn(const std::shared_ptr<Door>& door, Napi::Function fn);
using SharedObject = std::shared_ptr<Napi::ObjectReference>;
SharedObject keepObject(const std::shared_ptr<Door>& door, Napi::Object o);

// What a middleware, tool or model is told of its call (the record's EffectContext).
Napi::Object effectContextObject(Napi::Env env, const effects::EffectContext& c);

// The ctx object a JavaScript workflow gets (js_workflow.cc).
void addWorkflow(Core& core, const std::string& name, Napi::Function fn);
// Tools, models and agents (js_effects.cc).
void addTool(Core& core, agent::ToolDefinition d, bool untrusted, Napi::Function fn);
std::shared_ptr<agent::Model> jsModel(const std::shared_ptr<Door>& door, std::string id,
                                      SharedObject model);
std::shared_ptr<agent::Tool> jsTool(const std::shared_ptr<Door>& door, agent::ToolDefinition d,
                                    bool untrusted, SharedFn fn);
void addModel(Core& core, std::shared_ptr<agent::Model> model);
void addAgent(Core& core, const std::string& name, Napi::Object options);
// {model, tools, system, maxTurns, parallelToolCalls} of agent `name`, its model and tools
// registered already (NotFoundError naming one that is not).
agent::AgentOptions agentOptionsOf(const Core& core, const std::string& name, Napi::Object options);
// Starts an MCP server (stdio) and registers its tools; their names.
std::vector<std::string> addMcpServer(Core& core, Napi::Object options);

// defineConfig's JavaScript callables (js_config.cc): {digests, onOffload, onWarn,
// middleware: [[index, object, name]], middlewareCount}.
std::shared_ptr<const app::Config> withJsCallables(Napi::Env env,
                                                   std::shared_ptr<const app::Config> parsed,
                                                   Napi::Object callables);

Napi::Object initApp(Napi::Env env, Napi::Object exports);     // js_app.cc
Napi::Object initEffects(Napi::Env env, Napi::Object exports); // js_effects.cc
Napi::Object initWorker(Napi::Env env, Napi::Object exports);  // js_worker.cc
Napi::Object initContent(Napi::Env env, Napi::Object exports); // js_content.cc
// The Core of an App object (for the worker and the content store).
std::shared_ptr<Core> coreOf(Napi::Value app);
// storage.contentStore.sealed of a config handle (native.defineConfig's value).
bool configSealed(Napi::Value config);

}  // namespace loom::node
