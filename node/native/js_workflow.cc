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
#include <deque>
#include <optional>
#include <unordered_set>
#include <utility>

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
  // The steps recorded when the workflow function started (nullopt: unknown), set on the core
  // thread before it is called. Then the JavaScript thread's alone:
  std::optional<std::unordered_set<std::string>> recordedAtStart;
  std::unordered_set<std::string> asked;  // every step id this run's calls named
  int inFlight = 0;                       // calls posted and not yet settled here
  // While a step's function runs here ahead of its call, that call and every later one wait
  // here, in order, so the core never waits for the function (released when it settles).
  bool holding = false;
  std::deque<std::pair<std::function<void()>, std::function<void(std::exception_ptr)>>> held;

  void post(std::function<void()> task, std::function<void(std::exception_ptr)> drop) {
    if (holding) held.emplace_back(std::move(task), std::move(drop));
    else channel->post(std::move(task), std::move(drop));
  }
  void release() {
    holding = false;
    for (auto& [task, drop] : held) channel->post(std::move(task), std::move(drop));
    held.clear();
  }

  // A step that will run whatever the core finds: not recorded, not named before in this run,
  // not an agent loop's (their ids hold '#'), and nothing ahead of it (the core is idle, so it
  // is the next call it makes). Its function may then run here before the core asks for it.
  bool surelyNew(const std::string& id) const {
    return inFlight == 0 && recordedAtStart && !recordedAtStart->count(id) && !asked.count(id) &&
           id.find('#') == std::string::npos;
  }
};

// Posts `op` (a journaled call made on the workflow's thread) and returns its promise.
Napi::Value ask(Napi::Env env, const std::shared_ptr<Run>& run,
                std::function<json::value(workflow::WorkflowContext&)> op) {
  auto deferred = std::make_shared<Napi::Promise::Deferred>(env);
  auto door = run->door;
  ++run->inFlight;
  // A call the run will not make (it stopped, or returned): rejected with the stop (Suspended)
  // or, after a return, as a use of a context past its run.
  auto drop = [door, deferred, run](std::exception_ptr stop) {
    std::exception_ptr why = stop ? stop
                                  : std::make_exception_ptr(FailedPreconditionError(
                                        "this workflow context belongs to a run that has returned; "
                                        "use a context only inside its workflow function"));
    door->send([deferred, why, run](Napi::Env env) {
      --run->inFlight;
      deferred->Reject(errorToJs(env, why));
    });
  };
  run->post([run, deferred, op = std::move(op)]() mutable {
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
    run->door->send([deferred, out = std::move(out), error, run, done = std::move(op)](Napi::Env env) {
      --run->inFlight;
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
    std::string where = "step '" + id + "'";
    bool surelyNew = run->surelyNew(id);
    run->asked.insert(id);
    SharedFn fn = keepFn(run->door, info[1].As<Napi::Function>());
    // The step's function, called from the core thread and waited for there.
    auto callFn = [run, fn, where] {
      auto channel = std::make_shared<Channel>();
      return callJs(*run->door, channel, where, [fn](Napi::Env) -> Napi::Value { return fn->Call({}); });
    };
    if (!surelyNew) {
      return ask(info.Env(), run, [id, callFn](workflow::WorkflowContext& c) { return c.step(id, callFn); });
    }
    // Two thread crossings instead of four: the function runs now, here, and its journaling
    // call goes to the core once it settled (a second attempt, if the core makes one, calls
    // it); calls made meanwhile wait behind it.
    auto outcome = std::make_shared<Channel>();
    run->holding = true;
    Napi::Value promise = ask(info.Env(), run, [id, outcome, callFn](workflow::WorkflowContext& c) {
      bool first = true;
      return c.step(id, [&] {
        if (!std::exchange(first, false)) return callFn();
        return outcome->wait();
      });
    });
    callInto(info.Env(), outcome, where, [fn](Napi::Env) -> Napi::Value { return fn->Call({}); },
             [run] { run->release(); });
    return promise;
  }));
  ctx.Set("effect", method(env, [run](const Napi::CallbackInfo& info) -> Napi::Value {
    std::string stepId = info[0].ToString().Utf8Value();
    std::string effectId = info[1].ToString().Utf8Value();
    json::value input = inputOf(info, 2, "the input of step '" + stepId + "'");
    run->asked.insert(stepId);
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
    run->asked.insert(stepId);
    return ask(info.Env(), run, [stepId, ms](workflow::WorkflowContext& c) {
      c.sleep(stepId, std::chrono::milliseconds(ms));
      return json::value(nullptr);
    });
  }));
  // agentLoop(name, {model, tools, system, maxTurns, parallelToolCalls}, prompt): the record's
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
      run->asked.insert(stepId);
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
    if (auto ids = ctx.recordedStepIds()) run->recordedAtStart.emplace(ids->begin(), ids->end());
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
