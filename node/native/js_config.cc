// defineConfig's JavaScript callables, set after the grouped config is parsed (as the Python
// package does, py_config.cc): execution.claimCheck.digests[toolId] (fn(result, text)),
// execution.claimCheck.onOffload (fn(info)), observability.onWarn (fn(message)) and JavaScript
// entries of execution.effectMiddleware (objects with invoke(ctx, input, next), kept at their
// place among the ready-made ones); then the whole config is validated again. They are called
// on core threads through a Door of the environment's own, and waited for there.
#include <cstdio>

#include "js_app.h"
#include "loom/app/config_file.h"
#include "loom/middleware/claim_check/claim_check_options.h"
#include "loom/util/error.h"

namespace loom::node {
namespace {

// A JavaScript middleware: invoke(ctx, input, next) with next(input) -> Promise, whose call
// runs the rest of the chain on the core thread that waits for invoke.
class JsMiddleware : public effects::Middleware {
 public:
  JsMiddleware(std::shared_ptr<Door> door, std::string name, SharedObject object)
      : door_(std::move(door)), name_(std::move(name)), object_(std::move(object)) {}
  std::string_view name() const override { return name_; }
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override {
    auto channel = std::make_shared<Channel>();
    auto live = std::make_shared<std::atomic<bool>>(true);
    struct Expire {
      std::shared_ptr<std::atomic<bool>> live;
      std::shared_ptr<Channel> channel;
      ~Expire() {
        *live = false;
        channel->close();
      }
    } expire{live, channel};
    auto door = door_;
    return callJs(*door_, channel, "middleware '" + name_ + "'", [&, channel, live, door](Napi::Env env) -> Napi::Value {
      Napi::Object m = object_->Value();
      Napi::Function nextFn = Napi::Function::New(env, [&, channel, live, door](const Napi::CallbackInfo& info) -> Napi::Value {
        auto deferred = std::make_shared<Napi::Promise::Deferred>(info.Env());
        json::value in;
        try {
          in = info.Length() > 0 && !info[0].IsUndefined()
                   ? toJson(info[0], "the input a middleware passed to next")
                   : json::value(nullptr);
        } catch (...) {
          deferred->Reject(errorToJs(info.Env(), std::current_exception()));
          return deferred->Promise();
        }
        auto drop = [deferred, door](std::exception_ptr) {
          door->send([deferred](Napi::Env env) {
            deferred->Reject(errorToJs(env, std::make_exception_ptr(FailedPreconditionError(
                "a middleware's next was called after its invoke returned; call next only inside invoke"))));
          });
        };
        if (!*live) {
          drop(nullptr);
          return deferred->Promise();
        }
        channel->post([&, deferred, in, door]() mutable {
          std::exception_ptr error;
          json::value out;
          try {
            out = next(ctx, std::move(in));
          } catch (...) {
            error = std::current_exception();
          }
          door->send([deferred, out, error](Napi::Env env) {
            if (error) deferred->Reject(errorToJs(env, error));
            else deferred->Resolve(toJs(env, out));
          });
        }, drop);
        return deferred->Promise();
      });
      return m.Get("invoke").As<Napi::Function>().Call(m, {effectContextObject(env, ctx), toJs(env, input), nextFn});
    });
  }

 private:
  std::shared_ptr<Door> door_;
  std::string name_;
  SharedObject object_;
};

std::shared_ptr<Door>& configDoor(Napi::Env env) {
  static std::shared_ptr<Door> door;
  if (!door) door = std::make_shared<Door>(env);
  return door;
}

json::value callFn(const std::shared_ptr<Door>& door, const SharedFn& fn, const std::string& where,
                   std::function<std::vector<napi_value>(Napi::Env)> args) {
  auto channel = std::make_shared<Channel>();
  return callJs(*door, channel, where, [fn, args](Napi::Env env) -> Napi::Value {
    std::vector<napi_value> a = args(env);
    return fn->Call(a);
  });
}

}  // namespace

// withCallables(parsed, callables): the config with the callables set, validated again.
std::shared_ptr<const app::Config> withJsCallables(Napi::Env env, std::shared_ptr<const app::Config> parsed,
                                                   Napi::Object c) {
  Napi::Object digests = c.Get("digests").As<Napi::Object>();
  Napi::Value onOffload = c.Get("onOffload"), onWarn = c.Get("onWarn");
  Napi::Array middleware = c.Get("middleware").As<Napi::Array>();  // [[index, object, name]]
  uint32_t count = c.Get("middlewareCount").As<Napi::Number>().Uint32Value();
  Napi::Array digestTools = digests.GetPropertyNames();
  if (digestTools.Length() == 0 && !onOffload.IsFunction() && !onWarn.IsFunction() &&
      middleware.Length() == 0) {
    return parsed;
  }
  auto door = configDoor(env);
  app::Config config = *parsed;
  if (digestTools.Length() > 0 || onOffload.IsFunction()) {
    if (!config.execution.claimCheck) {
      throw app::ConfigValidationError("defineConfig", {{"execution.claimCheck", "digests and onOffload need execution.claimCheck.toolIds; set it"}});
    }
  }
  for (uint32_t i = 0; i < digestTools.Length(); ++i) {
    std::string tool = digestTools.Get(i).ToString().Utf8Value();
    SharedFn fn = keepFn(door, digests.Get(tool).As<Napi::Function>());
    std::string where = "the digest of tool '" + tool + "'";
    config.execution.claimCheck->digests[tool] = [door, fn, where](const json::value& result, std::string_view text) {
      std::string t(text);
      return callFn(door, fn, where, [result, t](Napi::Env env) {
        return std::vector<napi_value>{toJs(env, result), Napi::String::New(env, t)};
      });
    };
  }
  if (onOffload.IsFunction()) {
    SharedFn fn = keepFn(door, onOffload.As<Napi::Function>());
    config.execution.claimCheck->onOffload = [door, fn](const middleware::OffloadInfo& info) {
      json::value i{{"executionId", info.context.executionId}, {"stepId", info.context.stepId},
                    {"effectId", info.context.effectId}, {"address", info.address},
                    {"size", info.size}, {"envelope", info.envelope}};
      callFn(door, fn, "execution.claimCheck.onOffload", [i](Napi::Env env) {
        return std::vector<napi_value>{toJs(env, i)};
      });
    };
  }
  if (onWarn.IsFunction()) {
    SharedFn fn = keepFn(door, onWarn.As<Napi::Function>());
    config.observability.onWarn = [door, fn](std::string_view message) {
      std::string m(message);
      try {
        callFn(door, fn, "observability.onWarn", [m](Napi::Env env) {
          return std::vector<napi_value>{Napi::String::New(env, m)};
        });
      } catch (const std::exception& e) {
        std::fprintf(stderr, "loom: warning: %s (observability.onWarn threw: %s)\n", m.c_str(), e.what());
      }
    };
  }
  if (middleware.Length() > 0) {
    std::vector<std::shared_ptr<effects::Middleware>> built = config.execution.effectMiddleware, all;
    std::size_t next = 0;
    uint32_t js = 0;
    for (uint32_t i = 0; i < count; ++i) {
      Napi::Array entry = js < middleware.Length() ? middleware.Get(js).As<Napi::Array>() : Napi::Array();
      if (js < middleware.Length() && entry.Get(0u).As<Napi::Number>().Uint32Value() == i) {
        all.push_back(std::make_shared<JsMiddleware>(door, entry.Get(2u).ToString().Utf8Value(),
                                                     keepObject(door, entry.Get(1u).As<Napi::Object>())));
        ++js;
      } else if (next < built.size()) {
        all.push_back(built[next++]);
      }
    }
    config.execution.effectMiddleware = std::move(all);
  }
  return app::defineConfig(std::move(config));
}

}  // namespace loom::node
