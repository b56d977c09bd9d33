// defineConfig's JavaScript callables, set after the grouped config is parsed (as the Python
// package does, py_config.cc): execution.claimCheck.digests[toolId] (fn(result, text)),
// execution.claimCheck.onOffload (fn(info)), observability.onWarn (fn(message)) and JavaScript
// entries of execution.effectMiddleware (objects with invoke(ctx, input, next), and
// claimCheckMiddleware(...)s, kept at their place among the ready-made ones); then the whole
// config is validated again. They are called
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

// A digest function: previewDigest(n)'s is computed by the core (no call back), any other
// is called on the JavaScript thread.
middleware::DigestFn jsDigest(Napi::Env env, const std::shared_ptr<Door>& door, Napi::Function f,
                              std::string where) {
  Napi::Value chars = f.Get(Napi::Symbol::For(env, "loom.previewChars"));
  if (chars.IsNumber()) return middleware::previewDigest(chars.As<Napi::Number>().Int64Value());
  SharedFn fn = keepFn(door, f);
  return [door, fn, where](const json::value& result, std::string_view text) {
    std::string t(text);
    return callFn(door, fn, where, [result, t](Napi::Env env) {
      return std::vector<napi_value>{toJs(env, result), Napi::String::New(env, t)};
    });
  };
}

std::function<void(const middleware::OffloadInfo&)> jsOnOffload(const std::shared_ptr<Door>& door,
                                                                Napi::Function f,
                                                                std::string where) {
  SharedFn fn = keepFn(door, f);
  return [door, fn, where](const middleware::OffloadInfo& info) {
    json::value i{{"executionId", info.context.executionId}, {"stepId", info.context.stepId},
                  {"effectId", info.context.effectId}, {"address", info.address},
                  {"size", info.size}, {"envelope", info.envelope}};
    callFn(door, fn, where, [i](Napi::Env env) { return std::vector<napi_value>{toJs(env, i)}; });
  };
}

std::function<void(std::string_view)> jsOnWarn(const std::shared_ptr<Door>& door, Napi::Function f,
                                               std::string where) {
  SharedFn fn = keepFn(door, f);
  return [door, fn, where](std::string_view message) {
    std::string m(message);
    try {
      callFn(door, fn, where, [m](Napi::Env env) {
        return std::vector<napi_value>{Napi::String::New(env, m)};
      });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "loom: warning: %s (%s threw: %s)\n", m.c_str(), where.c_str(), e.what());
    }
  };
}

// claimCheckMiddleware(options) of node/lib/claim_check.mjs (checked there): a claim-check on
// the app's content store, bound to each App's store at boot.
std::shared_ptr<effects::Middleware> jsClaimCheck(Napi::Env env, const std::shared_ptr<Door>& door,
                                                  Napi::Object o) {
  middleware::ClaimCheckOptions options;
  options.name = o.Get("name").ToString().Utf8Value();
  std::string where = "claimCheckMiddleware '" + options.name + "'";
  auto has = [&](const char* key) { return !o.Get(key).IsUndefined(); };
  auto flag = [&](const char* key) { return has(key) && o.Get(key).ToBoolean().Value(); };
  if (has("inlineCapBytes")) options.inlineCapBytes = o.Get("inlineCapBytes").As<Napi::Number>().Int64Value();
  if (has("digests")) {
    Napi::Object digests = o.Get("digests").As<Napi::Object>();
    Napi::Array ids = digests.GetPropertyNames();
    for (uint32_t i = 0; i < ids.Length(); ++i) {
      std::string id = ids.Get(i).ToString().Utf8Value();
      options.digests[id] = jsDigest(env, door, digests.Get(id).As<Napi::Function>(),
                                     where + ", the digest of '" + id + "'");
    }
  }
  if (has("defaultDigest")) {
    options.defaultDigest = jsDigest(env, door, o.Get("defaultDigest").As<Napi::Function>(), where + " defaultDigest");
  }
  options.retain = flag("retain");
  options.envelopesAreData = flag("envelopesAreData");
  options.agentToolFramesOnly = flag("agentToolFramesOnly");
  if (has("effectIds")) {
    Napi::Array ids = o.Get("effectIds").As<Napi::Array>();
    options.effectIds.emplace();
    for (uint32_t i = 0; i < ids.Length(); ++i) options.effectIds->insert(ids.Get(i).ToString().Utf8Value());
  }
  if (has("passThrough")) {
    SharedFn fn = keepFn(door, o.Get("passThrough").As<Napi::Function>());
    options.passThrough = [door, fn, where](const effects::EffectContext& ctx, const json::value& result) {
      json::value answer = callFn(door, fn, where + " passThrough", [&ctx, result](Napi::Env env) {
        return std::vector<napi_value>{effectContextObject(env, ctx), toJs(env, result)};
      });
      return answer.is_bool() && answer.as_bool();
    };
  }
  if (has("onOffload")) options.onOffload = jsOnOffload(door, o.Get("onOffload").As<Napi::Function>(), where + " onOffload");
  if (has("onWarn")) options.onWarn = jsOnWarn(door, o.Get("onWarn").As<Napi::Function>(), where + " onWarn");
  return std::make_shared<middleware::AppStoreClaimCheck>(std::move(options));
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
    config.execution.claimCheck->digests[tool] = jsDigest(
        env, door, digests.Get(tool).As<Napi::Function>(), "the digest of tool '" + tool + "'");
  }
  if (onOffload.IsFunction()) {
    config.execution.claimCheck->onOffload =
        jsOnOffload(door, onOffload.As<Napi::Function>(), "execution.claimCheck.onOffload");
  }
  if (onWarn.IsFunction()) {
    config.observability.onWarn = jsOnWarn(door, onWarn.As<Napi::Function>(), "observability.onWarn");
  }
  if (middleware.Length() > 0) {
    std::vector<std::shared_ptr<effects::Middleware>> built = config.execution.effectMiddleware, all;
    std::size_t next = 0;
    uint32_t js = 0;
    for (uint32_t i = 0; i < count; ++i) {
      Napi::Array entry = js < middleware.Length() ? middleware.Get(js).As<Napi::Array>() : Napi::Array();
      if (js < middleware.Length() && entry.Get(0u).As<Napi::Number>().Uint32Value() == i) {
        if (entry.Length() > 3) {
          all.push_back(jsClaimCheck(env, door, entry.Get(1u).As<Napi::Object>()));
        } else {
          all.push_back(std::make_shared<JsMiddleware>(door, entry.Get(2u).ToString().Utf8Value(),
                                                       keepObject(door, entry.Get(1u).As<Napi::Object>())));
        }
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
