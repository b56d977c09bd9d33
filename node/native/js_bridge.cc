#include "js_bridge.h"

#include <cmath>
#include <thread>

#include "host/error_class.h"
#include "loom/util/error.h"

namespace loom::node {
namespace {

// --- values ------------------------------------------------------------------------------

[[noreturn]] void refuse(std::string_view what, const std::string& at, const std::string& why) {
  throw InvalidArgumentError(std::string(what) + " is not JSON: " + why + " at " + at +
                             "; use only null, booleans, finite numbers, strings, arrays and "
                             "plain objects");
}

std::string kindOf(Napi::Value v) {
  if (v.IsUndefined()) return "undefined";
  if (v.IsFunction()) return "a function";
  if (v.IsSymbol()) return "a symbol";
  if (v.Type() == napi_bigint) return "a BigInt";
  if (v.IsObject()) {
    Napi::Value ctor = v.As<Napi::Object>().Get("constructor");
    if (ctor.IsFunction()) {
      return "an object of class " + ctor.As<Napi::Function>().Get("name").ToString().Utf8Value();
    }
  }
  return "a value of type " + std::to_string(v.Type());
}

bool plainObject(Napi::Env env, Napi::Object o) {
  Napi::Object object = env.Global().Get("Object").As<Napi::Object>();
  Napi::Value proto = object.Get("getPrototypeOf").As<Napi::Function>().Call(object, {o});
  return proto.IsNull() || proto.StrictEquals(object.Get("prototype"));
}

json::value convert(Napi::Value v, std::string_view what, const std::string& at,
                    std::size_t depth) {
  if (v.IsNull()) return nullptr;
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value();
  if (v.IsNumber()) {
    double d = v.As<Napi::Number>().DoubleValue();
    if (!std::isfinite(d)) refuse(what, at, "the number " + std::to_string(d));
    if (d == std::floor(d) && std::fabs(d) <= 9007199254740991.0) return static_cast<int64_t>(d);
    return d;
  }
  if (v.IsString()) return json::value(v.As<Napi::String>().Utf8Value());
  if (v.IsArray() || (v.IsObject() && !v.IsFunction())) {
    if (depth >= json::kMaxValueDepth) {
      refuse(what, at, "arrays and objects nested deeper than " +
                           std::to_string(json::kMaxValueDepth) + " levels (a cycle?)");
    }
  }
  if (v.IsArray()) {
    Napi::Array a = v.As<Napi::Array>();
    json::array out;
    out.reserve(a.Length());
    for (uint32_t i = 0; i < a.Length(); ++i) {
      out.push_back(convert(a.Get(i), what, at + "[" + std::to_string(i) + "]", depth + 1));
    }
    return out;
  }
  if (v.IsObject() && !v.IsFunction() && plainObject(v.Env(), v.As<Napi::Object>())) {
    Napi::Object o = v.As<Napi::Object>();
    Napi::Array keys = o.GetPropertyNames();
    json::object out;
    for (uint32_t i = 0; i < keys.Length(); ++i) {
      std::string k = keys.Get(i).ToString().Utf8Value();
      Napi::Value item = o.Get(k);
      if (item.IsUndefined()) continue;  // as JSON.stringify: an absent member
      out[k] = convert(item, what, at + "." + k, depth + 1);
    }
    return out;
  }
  refuse(what, at, kindOf(v));
}

// --- errors ------------------------------------------------------------------------------

Napi::FunctionReference& errorFactory() {
  static Napi::FunctionReference factory;
  return factory;
}

constexpr const char* kNative = "loomNative";

Napi::Value nativeHandle(Napi::Env env, std::exception_ptr e) {
  return Napi::External<std::exception_ptr>::New(
      env, new std::exception_ptr(std::move(e)),
      [](Napi::Env, std::exception_ptr* p) { delete p; });
}

}  // namespace

json::value toJson(Napi::Value v, std::string_view what) {
  try {
    return convert(v, what, "$", 0);
  } catch (const Napi::Error& e) {  // a getter or a Proxy trap threw
    throw InvalidArgumentError(std::string(what) + " could not be read: " + e.Message());
  }
}

Napi::Value toJs(Napi::Env env, const json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: return env.Null();
    case boost::json::kind::bool_: return Napi::Boolean::New(env, v.get_bool());
    case boost::json::kind::int64: return Napi::Number::New(env, static_cast<double>(v.get_int64()));
    case boost::json::kind::uint64: return Napi::Number::New(env, static_cast<double>(v.get_uint64()));
    case boost::json::kind::double_: return Napi::Number::New(env, v.get_double());
    case boost::json::kind::string: {
      const auto& s = v.get_string();
      return Napi::String::New(env, s.data(), s.size());
    }
    case boost::json::kind::array: {
      const auto& a = v.get_array();
      Napi::Array out = Napi::Array::New(env, a.size());
      for (std::size_t i = 0; i < a.size(); ++i) out.Set(static_cast<uint32_t>(i), toJs(env, a[i]));
      return out;
    }
    case boost::json::kind::object: {
      Napi::Object out = Napi::Object::New(env);
      for (const auto& [key, item] : v.get_object()) {  // own data properties ("__proto__" too)
        out.DefineProperty(Napi::PropertyDescriptor::Value(
            std::string(key), toJs(env, item), napi_default_jsproperty));
      }
      return out;
    }
  }
  return env.Null();
}

void setErrorFactory(Napi::Function factory) {
  errorFactory() = Napi::Persistent(factory);
  errorFactory().SuppressDestruct();
}

Napi::Value errorToJs(Napi::Env env, std::exception_ptr e) {
  std::string cls = "Suspended", code = "stopped", message;
  Napi::Object extra = Napi::Object::New(env);
  try {
    std::rethrow_exception(e);
  } catch (const Error& error) {
    cls = std::string(host::errorClassName(error));
    code = std::string(errorCodeName(error.code()));
    message = error.what();
    if (const auto* invalid = dynamic_cast<const app::ConfigValidationError*>(&error)) {
      Napi::Array issues = Napi::Array::New(env);
      uint32_t i = 0;
      for (const auto& issue : invalid->issues()) {
        Napi::Object o = Napi::Object::New(env);
        o.Set("path", issue.path);
        o.Set("message", issue.message);
        issues.Set(i++, o);
      }
      extra.Set("issues", issues);
    }
    if (const auto* failed = dynamic_cast<const workflow::StepFailedError*>(&error)) {
      extra.Set("stepId", failed->stepId());
      extra.Set("cause", std::string(errorCodeName(failed->cause())));
    }
  } catch (const std::exception& other) {
    cls = "InternalError", code = "internal";
    message = std::string("internal error: ") + other.what();
  } catch (...) {
    message = "the run stops here (it parks or ends); let this error propagate";
  }
  extra.Set(kNative, nativeHandle(env, e));
  if (errorFactory().IsEmpty()) return Napi::Error::New(env, message).Value();
  return errorFactory().Call({Napi::String::New(env, cls), Napi::String::New(env, code),
                              Napi::String::New(env, message), extra});
}

namespace {
std::exception_ptr readErrorFromJs(Napi::Value error, const std::string& where);
}  // namespace

std::exception_ptr errorFromJs(Napi::Value error, const std::string& where) {
  try {
    return readErrorFromJs(error, where);
  } catch (...) {  // a hostile value: a Symbol, a getter that throws, a null-prototype object
    return std::make_exception_ptr(InternalError(
        where + " threw a value that cannot be read as an error (a Symbol, or an object whose "
                "members throw)"));
  }
}

namespace {
std::exception_ptr readErrorFromJs(Napi::Value error, const std::string& where) {
  if (error.IsObject()) {
    Napi::Object o = error.As<Napi::Object>();
    Napi::Value handle = o.Get(kNative);
    if (handle.IsExternal()) return *handle.As<Napi::External<std::exception_ptr>>().Data();
    Napi::Value code = o.Get("code");
    Napi::Value name = o.Get("name");
    std::string type = name.IsString() ? name.As<Napi::String>().Utf8Value() : "Error";
    Napi::Value m = o.Get("message");
    std::string message = m.IsString() ? m.As<Napi::String>().Utf8Value() : error.ToString().Utf8Value();
    if (o.Get("isLoomError").ToBoolean().Value() && code.IsString()) {
      try {
        rethrowWithContext(Error(errorCodeFromName(code.As<Napi::String>().Utf8Value()), message),
                           where + " threw " + type);
      } catch (...) {
        return std::current_exception();
      }
    }
    return std::make_exception_ptr(InternalError(where + " threw " + type + ": " + message));
  }
  return std::make_exception_ptr(
      InternalError(where + " threw " + error.ToString().Utf8Value() + " (not an Error)"));
}
}  // namespace

// --- threads -----------------------------------------------------------------------------

Door::Door(Napi::Env env)
    : tsfn_(Napi::ThreadSafeFunction::New(
          env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}), "loom", 0, 1,
          [gone = gone_](Napi::Env) { *gone = true; })) {
  tsfn_.Unref(env);
}

Door::~Door() {
  if (!*gone_) tsfn_.Release();
}

bool Door::send(std::function<void(Napi::Env)> fn) {
  if (*gone_) return false;
  auto* task = new std::function<void(Napi::Env)>(std::move(fn));
  napi_status s = tsfn_.BlockingCall(task, [](Napi::Env env, Napi::Function,
                                             std::function<void(Napi::Env)>* t) {
    if (env != nullptr) (*t)(env);
    delete t;
  });
  if (s != napi_ok) delete task;
  return s == napi_ok;
}

void Channel::post(std::function<void()> task, std::function<void(std::exception_ptr)> drop) {
  std::unique_lock lock(mu_);
  if (closed_ || stopped_) {
    std::exception_ptr stop = stopped_;
    lock.unlock();
    drop(stop);
    return;
  }
  tasks_.push_back({std::move(task), std::move(drop)});
  cv_.notify_all();
}

void Channel::settle(json::value value) {
  std::lock_guard lock(mu_);
  if (!value_ && !error_) value_ = std::move(value);
  cv_.notify_all();
}

void Channel::fail(std::exception_ptr error) {
  std::lock_guard lock(mu_);
  if (!value_ && !error_) error_ = std::move(error);
  cv_.notify_all();
}

void Channel::stop(std::exception_ptr stop) {
  std::lock_guard lock(mu_);
  if (!stopped_) stopped_ = std::move(stop);
  cv_.notify_all();
}

json::value Channel::wait() {
  std::unique_lock lock(mu_);
  for (;;) {
    // JavaScript usually answers within microseconds: look again a few times, yielding the
    // core, before sleeping (a futex wake-up costs tens of microseconds on a loaded machine).
    for (int spin = 0; spin < 64 && !(stopped_ || value_ || error_ || !tasks_.empty()); ++spin) {
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    }
    cv_.wait(lock, [&] { return stopped_ || value_ || error_ || !tasks_.empty(); });
    if (stopped_) std::rethrow_exception(stopped_);
    if (!tasks_.empty()) {
      auto task = std::move(tasks_.front().run);
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      continue;
    }
    if (error_) std::rethrow_exception(error_);
    return std::move(*value_);
  }
}

void Channel::close() {
  std::deque<Task> dropped;
  std::exception_ptr stop;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    dropped.swap(tasks_);
    stop = stopped_;
  }
  for (auto& t : dropped) t.drop(stop);
}

void callInto(Napi::Env env, const std::shared_ptr<Channel>& channel, const std::string& where,
              const std::function<Napi::Value(Napi::Env)>& call) {
  auto settled = [channel](json::value* value, std::exception_ptr error) {
    if (value) channel->settle(std::move(*value));
    else channel->fail(error);
  };
  try {
    Napi::Value v = call(env);
    if (!v.IsPromise()) {
      json::value out = toJson(v, "what " + where + " returned");
      settled(&out, nullptr);
      return;
    }
    Napi::Object promise = v.As<Napi::Object>();
    auto onValue = Napi::Function::New(env, [settled, where](const Napi::CallbackInfo& info) {
      json::value out;
      try {
        out = toJson(info[0], "what " + where + " returned");
      } catch (const Napi::Error& e) {
        settled(nullptr, errorFromJs(e.Value(), where));
        return;
      } catch (...) {
        settled(nullptr, std::current_exception());
        return;
      }
      settled(&out, nullptr);
    });
    auto onError = Napi::Function::New(env, [settled, where](const Napi::CallbackInfo& info) {
      settled(nullptr, errorFromJs(info[0], where));
    });
    promise.Get("then").As<Napi::Function>().Call(promise, {onValue, onError});
  } catch (const Napi::Error& e) {
    settled(nullptr, errorFromJs(e.Value(), where));
  } catch (...) {
    settled(nullptr, std::current_exception());
  }
}

json::value callJs(Door& door, const std::shared_ptr<Channel>& channel, std::string where,
                   std::function<Napi::Value(Napi::Env)> call) {
  bool sent = door.send([channel, where, call = std::move(call)](Napi::Env env) {
    callInto(env, channel, where, call);
  });
  if (!sent) throw UnavailableError(where + " cannot be called: the Node.js environment has ended");
  return channel->wait();
}

Napi::Promise offThread(Napi::Env env, std::function<Done()> work) {
  auto deferred = std::make_shared<Napi::Promise::Deferred>(env);
  auto tsfn = Napi::ThreadSafeFunction::New(
      env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}), "loom-op", 0, 1);
  std::thread([deferred, tsfn, work = std::move(work)]() mutable {
    Done done;
    std::exception_ptr error;
    try {
      done = work();
    } catch (...) {
      error = std::current_exception();
    }
    auto* settle = new std::function<void(Napi::Env)>([deferred, done, error](Napi::Env env) {
      if (error) {
        deferred->Reject(errorToJs(env, error));
        return;
      }
      try {
        deferred->Resolve(done(env));
      } catch (const Napi::Error& e) {
        deferred->Reject(e.Value());
      } catch (...) {
        deferred->Reject(errorToJs(env, std::current_exception()));
      }
    });
    napi_status s = tsfn.BlockingCall(settle, [](Napi::Env env, Napi::Function,
                                                 std::function<void(Napi::Env)>* t) {
      if (env != nullptr) (*t)(env);
      delete t;
    });
    if (s != napi_ok) delete settle;
    tsfn.Release();
  }).detach();
  return deferred->Promise();
}

}  // namespace loom::node
