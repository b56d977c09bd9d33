// The app's content store from JavaScript (node/lib/content.mjs: ContentStore,
// EncryptingContentStore, resolveClaimCheck) and the content walker (visitCitedAddresses,
// retainRootsOf). A store operation opens the app's home as every operation does (a
// HomeSession on a thread of its own) and settles a promise; the walker is pure and runs here.
#include <sstream>

#include "host/home_session.h"
#include "js_app.h"
#include "loom/app/app.h"
#include "loom/kernel/event.h"
#include "loom/middleware/claim_check/claim_check.h"
#include "loom/util/error.h"
#include "sweep/content_walker.h"

namespace loom::node {
namespace {

// The subject option: absent (undefined or null), or a string; anything else is refused, not
// ignored (a blob put for no subject would escape that subject's erasure).
std::optional<std::string> subjectOption(const Napi::CallbackInfo& info, std::size_t i) {
  if (info.Length() <= i || info[i].IsUndefined() || info[i].IsNull()) return std::nullopt;
  if (!info[i].IsString()) {
    throw InvalidArgumentError("the subject option must be a string (the run's data subject), not " +
                               std::string(info[i].IsNumber() ? "a number" : "a value of another type"));
  }
  return info[i].ToString().Utf8Value();
}

// The bytes of a string (UTF-8) or of a Uint8Array / Buffer.
std::string bytesOf(Napi::Value v) {
  if (v.IsString()) return v.ToString().Utf8Value();
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    auto a = v.As<Napi::Uint8Array>();
    return std::string(reinterpret_cast<const char*>(a.Data()), a.ByteLength());
  }
  throw InvalidArgumentError("put takes a string or a Uint8Array (a Buffer), not " +
                             std::string(v.IsNull() ? "null" : "a value of another type"));
}

// `work(store)` on a thread of its own, against the content store of the app's home (created
// for a put; a read of a home that does not exist says so).
Napi::Value withStore(Napi::Env env, std::shared_ptr<Core> core,
                      std::function<Done(content::ContentStore&)> work, bool create = false) {
  core->started = true;
  return offThread(env, [core, work, create]() -> Done {
    std::ostringstream out;
    host::HomeSession session(core->workflows, core->tasks, out, core->config);
    core->applyHome(session.options());
    return work(*session.app(create).contentStore());
  });
}

Napi::Value capabilitiesOf(Napi::Env env, const content::ContentCapabilities& c) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("remove", c.remove);
  o.Set("deleteIfUntouchedSince", c.deleteIfUntouchedSince);
  o.Set("touchClock", c.touchClock);
  o.Set("enumerate", c.enumerate);
  o.Set("sealsContent", c.sealsContent);
  return o;
}

// contentOp(app, op, ...) -> Promise: put(bytes, subject?) -> address; get(address, subject?)
// -> Buffer | null; has(address) -> boolean; capabilities() -> {...};
// resolveClaimCheck(envelope, subject?) -> value | null.
Napi::Value contentOp(const Napi::CallbackInfo& info) {
  return jsCall(info, [&]() -> Napi::Value {
    auto core = coreOf(info[0]);
    std::string op = info[1].ToString().Utf8Value();
    Napi::Env env = info.Env();
    if (op == "put") {
      std::string bytes = bytesOf(info[2]);
      auto subject = subjectOption(info, 3);
      return withStore(env, core, [bytes, subject](content::ContentStore& s) -> Done {
        std::string address = s.put(bytes, subject);
        return [address](Napi::Env env) -> Napi::Value { return Napi::String::New(env, address); };
      }, true);
    }
    if (op == "get") {
      std::string address = info[2].ToString().Utf8Value();
      auto subject = subjectOption(info, 3);
      return withStore(env, core, [address, subject](content::ContentStore& s) -> Done {
        auto bytes = s.get(address, subject);
        return [bytes](Napi::Env env) -> Napi::Value {
          if (!bytes) return env.Null();
          return Napi::Buffer<char>::Copy(env, bytes->data(), bytes->size());
        };
      });
    }
    if (op == "has") {
      std::string address = info[2].ToString().Utf8Value();
      return withStore(env, core, [address](content::ContentStore& s) -> Done {
        bool has = s.has(address);
        return [has](Napi::Env env) -> Napi::Value { return Napi::Boolean::New(env, has); };
      });
    }
    if (op == "capabilities") {
      return withStore(env, core, [](content::ContentStore& s) -> Done {
        auto caps = s.capabilities();
        return [caps](Napi::Env env) { return capabilitiesOf(env, caps); };
      });
    }
    if (op == "resolveClaimCheck") {
      json::value envelope = toJson(info[2], "the envelope");
      auto subject = subjectOption(info, 3);
      return withStore(env, core, [envelope, subject](content::ContentStore& s) -> Done {
        auto value = middleware::resolveClaimCheck(s, envelope, subject);
        return [value](Napi::Env env) -> Napi::Value { return value ? toJs(env, *value) : env.Null(); };
      });
    }
    throw InvalidArgumentError("unknown content store operation '" + op + "'");
  });
}

Napi::Array stringArray(Napi::Env env, const std::vector<std::string>& items) {
  Napi::Array out = Napi::Array::New(env, items.size());
  for (uint32_t i = 0; i < items.size(); ++i) out.Set(i, items[i]);
  return out;
}

}  // namespace

Napi::Object initContent(Napi::Env env, Napi::Object exports) {
  exports.Set("contentOp", Napi::Function::New(env, contentOp));
  // citedAddresses(value) -> [address]: every {"__loomContent": H} anywhere, in order.
  exports.Set("citedAddresses", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return jsCall(info, [&]() -> Napi::Value {
      std::vector<std::string> out;
      sweep::visitCitedAddresses(toJson(info[0], "the value"),
                                 [&](std::string_view a) { out.emplace_back(a); });
      return stringArray(info.Env(), out);
    });
  }));
  // retainRootsOf(event) -> [address]: an event as `loom log --json` lists it.
  exports.Set("retainRootsOf", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return jsCall(info, [&]() -> Napi::Value {
      json::value v = toJson(info[0], "the event");
      int64_t seq = v.is_object() && v.get_object().contains("seq") && v.at("seq").is_int64()
                        ? v.at("seq").as_int64()
                        : 0;
      kernel::Event event = kernel::eventFromJson("the event", seq, v);
      return stringArray(info.Env(), sweep::retainRootsOf(event));
    });
  }));
  // contentStoreSealed(config): storage.contentStore.sealed (an EncryptingContentStore).
  exports.Set("contentStoreSealed", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), configSealed(info[0]));
  }));
  return exports;
}

}  // namespace loom::node
