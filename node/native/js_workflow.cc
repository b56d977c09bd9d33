// Workflows written in JavaScript. The core runs a workflow on a thread of its own; the
// async function runs on the JavaScript thread with a ctx whose methods return promises: each
// posts its call to the workflow's core thread (the Channel it waits on), which makes the
// journaled call (running a step's function through the Door and waiting for its promise)
// and settles the promise. Calls run in the order JavaScript made them, so a workflow that
// awaits each step, or starts several at once, journals them in a deterministic order. The
// replay contract is C++'s (docs/typescript.md). Once the core stopped the run (a park, a
// cancel), the channel stops: the workflow's pending and later calls are rejected with
// Suspended, and its result no longer matters.
#include <chrono>
#include <cmath>

#include "js_app.h"
#include "loom/agent/agent_loop.h"
#include "loom/util/error.h"

namespace loom::node {
namespace {

struct Run {
  workflow::WorkflowContext* ctx;  // valid while the workflow function runs
  std::shared_ptr<Channel> channel = std::make_shared<Channel>();
  std::shared_ptr<Door> door;
  const Core* core;  // its registries hold this run's workflow
};

// Posts `op` (a journaled call made on the workflow's thread) and returns its promise.
Napi::Value ask(Napi::Env env, const std::shared_ptr<Run>& run,
                std::function<json::value(workflow::WorkflowContext&)> op) {
  auto deferred = std::make_shared<Napi::Promise::Deferred>(env);
  auto door = run->door;
  // A call the run will not make (it stopped, or returned): rejected with the stop (Suspended)
  // or, after a return, as a use of a context past its run.
  auto drop = [door, deferred](std::exception_ptr stop) {
    std::exception_ptr why = stop ? stop
                                  : std::make_exception_ptr(FailedPreconditionError(
                                        "this workflow context belongs to a run that has returned; "
                                        "use a context only inside its workflow function"));
    door->send([deferred, why](Napi::Env env) { deferred->Reject(errorToJs(env, why)); });
  };
  run->channel->post([run, deferred, op = std::move(op)]() mutable {
    std::exception_ptr error;
    json::value out;
    try {
      out = op(*run->ctx);
    } catch (...) {
      error = std::current_exception();
      try {
        std::rethrow_exception(error);
      } catch (const std::exception&) {
      } catch (...) {  // the core's control flow: the run stops here
        run->channel->stop(error);
      }
    }
    // The call (and what it holds: a step's function) is released on the JavaScript thread.
    run->door->send([deferred, out = std::move(out), error, done = std::move(op)](Napi::Env env) {
      if (error) deferred->Reject(errorToJs(env, error));
      else deferred->Resolve(toJs(env, out));
    });
  }, drop);
  return deferred->Promise();
}

// A ctx method: what it throws while reading its arguments (a value JSON cannot hold) is a
// JavaScript error of the package's class, never a C++ exception through Node.
template <class F>
Napi::Function method(Napi::Env env, F body) {
  return Napi::Function::New(env, [body](const Napi::CallbackInfo& info) -> Napi::Value {
    try {
      return body(info);
    } catch (const Napi::Error&) {
      throw;
    } catch (...) {
      throw Napi::Error(info.Env(), errorToJs(info.Env(), std::current_exception()));
    }
  });
}

json::value inputOf(const Napi::CallbackInfo& info, std::size_t i, const std::string& what) {
  return info.Length() > i && !info[i].IsUndefined() ? toJson(info[i], what) : json::value(nullptr);
}

Napi::Object contextObject(Napi::Env env, const std::shared_ptr<Run>& run) {
  Napi::Object ctx = Napi::Object::New(env);
  ctx.Set("executionId", run->ctx->executionId());
  ctx.Set("subject", run->ctx->subject() ? Napi::Value(Napi::String::New(env, *run->ctx->subject()))
                                         : env.Null());
  ctx.Set("input", toJs(env, run->ctx->input()));
  ctx.Set("step", method(env, [run](const Napi::CallbackInfo& info) -> Napi::Value {
    std::string id = info[0].ToString().Utf8Value();
    if (info.Length() < 2 || !info[1].IsFunction()) {
      throw InvalidArgumentError("ctx.step('" + id + "', fn): fn must be a function");
    }
    SharedFn fn = keepFn(run->door, info[1].As<Napi::Function>());
    return ask(info.Env(), run, [run, id, fn](workflow::WorkflowContext& c) {
      std::string where = "step '" + id + "'";
      return c.step(id, [&] {
        auto channel = std::make_shared<Channel>();
        return callJs(*run->door, channel, where,
                      [fn](Napi::Env) -> Napi::Value { return fn->Call({}); });
      });
    });
  }));
  ctx.Set("effect", method(env, [run](const Napi::CallbackInfo& info) -> Napi::Value {
    std::string stepId = info[0].ToString().Utf8Value();
    std::string effectId = info[1].ToString().Utf8Value();
    json::value input = inputOf(info, 2, "the input of step '" + stepId + "'");
    return ask(info.Env(), run, [stepId, effectId, input](workflow::WorkflowContext& c) {
      return c.effect(stepId, effectId, input);
    });
  }));
  ctx.Set("invokeTransient", method(env, [run](const Napi::CallbackInfo& info) -> Napi::Value {
    std::string effectId = info[0].ToString().Utf8Value();
    json::value input = inputOf(info, 1, "the transient call's input");
    return ask(info.Env(), run, [effectId, input](workflow::WorkflowContext& c) {
      return c.invokeTransient(effectId, input);
    });
  }));
  ctx.Set("patched", method(env, [run](const Napi::CallbackInfo& info) -> Napi::Value {
    if (!info[0].IsString()) throw InvalidArgumentError("ctx.patched(changeId): changeId must be a string");
    std::string changeId = info[0].ToString().Utf8Value();
    return ask(info.Env(), run,
               [changeId](workflow::WorkflowContext& c) { return json::value(c.patched(changeId)); });
  }));
  ctx.Set("waitForSignal", method(env, [run](const Napi::CallbackInfo& info) -> Napi::Value {
    std::string name = info[0].ToString().Utf8Value();
    return ask(info.Env(), run, [name](workflow::WorkflowContext& c) { return c.awaitSignal(name); });
  }));
  ctx.Set("sleep", method(env, [run](const Napi::CallbackInfo& info) -> Napi::Value {
    std::string stepId = info[0].ToString().Utf8Value();
    double requested = info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : -1;
    if (!std::isfinite(requested) || requested < 0 || requested > 3.2e11) {  // about ten years
      throw InvalidArgumentError("ctx.sleep('" + stepId + "', ms): ms must be a number of "
                                 "milliseconds from 0 to 3.2e11 (about ten years)");
    }
    int64_t ms = static_cast<int64_t>(requested);
    return ask(info.Env(), run, [stepId, ms](workflow::WorkflowContext& c) {
      c.sleep(stepId, std::chrono::milliseconds(ms));
      return json::value(nullptr);
    });
  }));
  // agentLoop(name, {model, tools, system, maxTurns, parallelToolCalls, budget}, prompt): the record's
  // agentLoop$ inside a workflow, with the app's registered model and tools.
  ctx.Set("agentLoop", method(env, [run](const Napi::CallbackInfo& info) -> Napi::Value {
    std::string name = info[0].ToString().Utf8Value();
    agent::AgentOptions options;
    json::value prompt;
    try {
      options = agentOptionsOf(*run->core, name, info[1].As<Napi::Object>());
      prompt = toJson(info[2], "the agent's prompt");
    } catch (const Napi::Error&) {
      throw;
    } catch (...) {
      throw Napi::Error(info.Env(), errorToJs(info.Env(), std::current_exception()));
    }
    return ask(info.Env(), run, [name, options, prompt](workflow::WorkflowContext& c) {
      return agent::agentLoop(c, name, options, prompt);
    });
  }));
  ctx.Set("effects", method(env, [run](const Napi::CallbackInfo& info) -> Napi::Value {
    Napi::Array calls = info[0].As<Napi::Array>();
    int max = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : 4;
    std::vector<workflow::WorkflowContext::EffectCall> native;
    for (uint32_t i = 0; i < calls.Length(); ++i) {
      Napi::Object c = calls.Get(i).As<Napi::Object>();
      std::string stepId = c.Get("stepId").ToString().Utf8Value();
      native.push_back({stepId, c.Get("effectId").ToString().Utf8Value(),
                        c.Has("input") && !c.Get("input").IsUndefined()
                            ? toJson(c.Get("input"), "the input of step '" + stepId + "'")
                            : json::value(nullptr)});
    }
    return ask(info.Env(), run, [native, max](workflow::WorkflowContext& c) {
      json::array out;
      for (auto& o : c.effects(native, max)) {
        json::object r{{"output", o.output}};
        if (o.failure) {
          try {
            std::rethrow_exception(o.failure);
          } catch (const Error& e) {
            r["error"] = json::object{{"code", std::string(errorCodeName(e.code()))},
                                      {"message", e.what()}};
          }
        }
        out.push_back(std::move(r));
      }
      return json::value(std::move(out));
    });
  }));
  return ctx;
}

}  // namespace

void addWorkflow(Core& core, const std::string& name, Napi::Function fn) {
  core.beforeRegistering("workflow '" + name + "'");
  SharedFn ref = keepFn(core.door, fn);
  std::shared_ptr<Door> door = core.door;
  std::string where = "workflow '" + name + "'";
  const Core* owner = &core;
  core.workflows.add(name, "", [ref, door, where, owner](workflow::WorkflowContext& ctx) {
    auto run = std::make_shared<Run>(Run{&ctx, std::make_shared<Channel>(), door, owner});
    struct Closer {
      std::shared_ptr<Run> run;
      ~Closer() { run->channel->close(); }
    } closer{run};
    return callJs(*door, run->channel, where, [ref, run](Napi::Env env) -> Napi::Value {
      return ref->Call({contextObject(env, run), toJs(env, run->ctx->input())});
    });
  });
}

}  // namespace loom::node
