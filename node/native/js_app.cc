#include "js_app.h"

#include <sstream>

#include "bench/steps_workflow.h"
#include "host/home_session.h"
#include "loom/app/app.h"
#include "loom/app/config_file.h"
#include "loom/middleware/claim_check/claim_check.h"
#include "loom/cli/cli.h"
#include "loom/util/error.h"

namespace loom::node {
namespace {

using ConfigHandle = std::shared_ptr<const app::Config>;

Napi::Value configValue(Napi::Env env, ConfigHandle config) {
  return Napi::External<ConfigHandle>::New(env, new ConfigHandle(std::move(config)),
                                           [](Napi::Env, ConfigHandle* p) { delete p; });
}

ConfigHandle configOf(Napi::Value v) {
  if (!v.IsExternal()) return app::defineConfig(app::Config{});
  return *v.As<Napi::External<ConfigHandle>>().Data();
}

std::vector<std::string> strings(Napi::Value v) {
  std::vector<std::string> out;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); ++i) out.push_back(a.Get(i).ToString().Utf8Value());
  return out;
}

class App : public Napi::ObjectWrap<App> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "App",
                       {InstanceMethod("workflow", &App::workflow),
                        InstanceMethod("tool", &App::tool),
                        InstanceMethod("model", &App::model),
                        InstanceMethod("agent", &App::agent),
                        InstanceMethod("mcpServer", &App::mcpServer),
                        InstanceMethod("invoke", &App::invoke),
                        InstanceMethod("main", &App::main)});
  }

  App(const Napi::CallbackInfo& info) : Napi::ObjectWrap<App>(info), core_(std::make_shared<Core>()) {
    core_->config = configOf(info[0]);
    core_->home = info.Length() > 1 && info[1].IsString() ? info[1].ToString().Utf8Value() : "";
    core_->door = std::make_shared<Door>(info.Env());
  }
  const std::shared_ptr<Core>& core() const { return core_; }

 private:
  Napi::Value workflow(const Napi::CallbackInfo& info) {
    return jsCall(info, [&] {
      addWorkflow(*core_, info[0].ToString().Utf8Value(), info[1].As<Napi::Function>());
      return info.Env().Undefined();
    });
  }
  // tool(name, {description, parameters, requiresApproval, untrusted, returnsMedia}, fn)
  Napi::Value tool(const Napi::CallbackInfo& info) {
    return jsCall(info, [&] {
      Napi::Object o = info[1].As<Napi::Object>();
      agent::ToolDefinition d;
      d.name = info[0].ToString().Utf8Value();
      if (o.Get("description").IsString()) d.description = o.Get("description").ToString().Utf8Value();
      if (o.Has("parameters")) {
        d.inputSchema = toJson(o.Get("parameters"), "the parameters of tool '" + d.name + "'");
      }
      d.requiresApproval = o.Get("requiresApproval").ToBoolean().Value();
      d.returnsMedia = o.Get("returnsMedia").ToBoolean().Value();
      addTool(*core_, std::move(d), o.Get("untrusted").ToBoolean().Value(),
              info[2].As<Napi::Function>());
      return info.Env().Undefined();
    });
  }
  // model(external) or model(id, object): registers it; returns its id.
  Napi::Value model(const Napi::CallbackInfo& info) {
    return jsCall(info, [&]() -> Napi::Value {
      std::shared_ptr<agent::Model> m;
      if (info[0].IsExternal()) {
        m = *info[0].As<Napi::External<std::shared_ptr<agent::Model>>>().Data();
      } else {
        m = jsModel(core_->door, info[0].ToString().Utf8Value(),
                    keepObject(core_->door, info[1].As<Napi::Object>()));
      }
      addModel(*core_, m);
      return Napi::String::New(info.Env(), m->id());
    });
  }
  Napi::Value agent(const Napi::CallbackInfo& info) {
    return jsCall(info, [&] {
      addAgent(*core_, info[0].ToString().Utf8Value(), info[1].As<Napi::Object>());
      return info.Env().Undefined();
    });
  }
  // mcpServer({name, command, args, env, inheritEnv, workingDirectory, timeoutMs}) -> [names]
  Napi::Value mcpServer(const Napi::CallbackInfo& info) {
    return jsCall(info, [&]() -> Napi::Value {
      std::vector<std::string> names = addMcpServer(*core_, info[0].As<Napi::Object>());
      Napi::Array out = Napi::Array::New(info.Env(), names.size());
      for (uint32_t i = 0; i < names.size(); ++i) out.Set(i, names[i]);
      return out;
    });
  }
  // invoke([args]) -> Promise<[exitCode, stdout]>: `loom <args>` in process, off this thread.
  Napi::Value invoke(const Napi::CallbackInfo& info) {
    std::vector<std::string> args = strings(info[0]);
    if (!core_->home.empty()) args.insert(args.begin(), {"--home", core_->home});
    core_->started = true;
    auto core = core_;
    return offThread(info.Env(), [core, args]() -> Done {
      std::ostringstream out;
      int code = cli::invoke(args, core->workflows, core->tasks, core->config, out);
      return [code, text = out.str()](Napi::Env env) -> Napi::Value {
        Napi::Array a = Napi::Array::New(env, 2);
        a.Set(0u, code);
        a.Set(1u, text);
        return a;
      };
    });
  }
  // main([argv]) -> Promise<exitCode>: the whole command line, output on this process's stdout.
  Napi::Value main(const Napi::CallbackInfo& info) {
    std::vector<std::string> argv = strings(info[0]);
    bool homeGiven = std::getenv("LOOM_HOME") != nullptr;
    for (const auto& a : argv) homeGiven = homeGiven || a == "--home" || a.starts_with("--home=");
    if (!core_->home.empty() && !homeGiven) argv.insert(argv.begin() + 1, {"--home", core_->home});
    core_->started = true;
    auto core = core_;
    return offThread(info.Env(), [core, argv]() mutable -> Done {
      std::vector<char*> line;
      for (auto& a : argv) line.push_back(a.data());
      int code = cli::main(static_cast<int>(line.size()), line.data(), core->workflows,
                           core->tasks, core->config);
      return [code](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, code); };
    });
  }

  std::shared_ptr<Core> core_;
};

Napi::FunctionReference& appClass() {
  static Napi::FunctionReference ref;
  return ref;
}

}  // namespace

void Core::applyHome(host::HomeOptions& options) const {
  host::readDatabaseEnvironment(options);
  if (!home.empty()) {
    options.home = home;
    options.homeGiven = true;
  }
}

void Core::beforeRegistering(const std::string& what) const {
  if (started) {
    throw FailedPreconditionError("cannot register " + what +
                                  " after the app ran something: register every workflow, tool, "
                                  "model and agent before the first run, worker or operation");
  }
}

SharedFn keepFn(const std::shared_ptr<Door>& door, Napi::Function fn) {
  auto* ref = new Napi::FunctionReference(Napi::Persistent(fn));
  std::weak_ptr<Door> weak = door;
  return SharedFn(ref, [weak](Napi::FunctionReference* p) {
    auto d = weak.lock();
    if (d && d->here()) {
      delete p;
      return;
    }
    if (d && d->send([p](Napi::Env) { delete p; })) return;
    // The environment is gone: the reference goes with it.
  });
}

SharedObject keepObject(const std::shared_ptr<Door>& door, Napi::Object o) {
  auto* ref = new Napi::ObjectReference(Napi::Persistent(o));
  std::weak_ptr<Door> weak = door;
  return SharedObject(ref, [weak](Napi::ObjectReference* p) {
    auto d = weak.lock();
    if (d && d->here()) {
      delete p;
      return;
    }
    if (d && d->send([p](Napi::Env) { delete p; })) return;
  });
}

bool configSealed(Napi::Value config) { return configOf(config)->storage.contentStore.sealed; }

std::shared_ptr<Core> coreOf(Napi::Value app) {
  return App::Unwrap(app.As<Napi::Object>())->core();
}

Napi::Object initApp(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = App::define(env);
  appClass() = Napi::Persistent(cls);
  appClass().SuppressDestruct();
  exports.Set("App", cls);
  exports.Set("setErrorFactory", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    setErrorFactory(info[0].As<Napi::Function>());
  }));
  // defineConfig(groups, origin) -> a frozen config (checked by the one option table).
  exports.Set("defineConfig", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return jsCall(info, [&] {
      json::value groups = toJson(info[0], "the config");
      auto parsed = app::parseConfigJson(groups, info[1].ToString().Utf8Value());
      if (info.Length() > 2 && info[2].IsObject()) {
        parsed = withJsCallables(info.Env(), parsed, info[2].As<Napi::Object>());
      }
      return configValue(info.Env(), parsed);
    });
  }));
  // jsonText(value, what): JSON text by the addon's rules (run inputs, signal payloads).
  exports.Set("jsonText", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return jsCall(info, [&]() -> Napi::Value {
      return Napi::String::New(info.Env(), json::toText(toJson(info[0], info[1].ToString().Utf8Value())));
    });
  }));
  // previewDigest(maxChars, result, text): the default digest of the agent opt-in (D3).
  exports.Set("previewDigest", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return jsCall(info, [&]() -> Napi::Value {
      middleware::DigestFn digest = middleware::previewDigest(info[0].As<Napi::Number>().Int64Value());
      return toJs(info.Env(), digest(toJson(info[1], "the result"), info[2].ToString().Utf8Value()));
    });
  }));
  exports.Set("loadConfig", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return jsCall(info, [&] {
      return configValue(info.Env(), app::loadConfigFile(info[0].ToString().Utf8Value()));
    });
  }));
  exports.Set("describeConfig", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), app::describeConfig(*configOf(info[0])));
  }));
  // benchWorkflows(app): the C++ twin of bench/node_bench.mjs's steps workflow ("bench.steps").
  exports.Set("benchWorkflows", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return jsCall(info, [&] {
      auto core = coreOf(info[0]);
      core->beforeRegistering("bench.steps");
      bench::addStepsWorkflow(core->workflows);
      return info.Env().Undefined();
    });
  }));
  exports.Set("configHome", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), configOf(info[0])->storage.home);
  }));
  return exports;
}

}  // namespace loom::node
