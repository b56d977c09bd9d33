// app.worker(): the Executor in this Node.js process, on a thread of its own, over a
// host::HomeSession and host::RecordedApps as `loom worker` runs it. While it runs it keeps
// the process alive (its Door is referenced); stop() drains and returns a promise.
#include <sstream>
#include <thread>

#include "host/home_session.h"
#include "host/recorded_apps.h"
#include "js_app.h"
#include "loom/util/error.h"
#include "loom/worker/executor.h"

namespace loom::node {
namespace {

struct Running {
  std::shared_ptr<Core> core;
  std::ostringstream out;
  std::unique_ptr<host::HomeSession> session;
  std::unique_ptr<host::RecordedApps> launcher;
  std::unique_ptr<worker::Executor> executor;
  std::thread thread;
  std::mutex mu;
  bool stopped = false;
};

class Worker : public Napi::ObjectWrap<Worker> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "Worker",
                       {InstanceMethod("start", &Worker::start), InstanceMethod("stop", &Worker::stop),
                        InstanceMethod("runUntilIdle", &Worker::runUntilIdle),
                        InstanceAccessor("active", &Worker::active, nullptr)});
  }
  // new Worker(app, {concurrency, pollMs})
  Worker(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Worker>(info), r_(std::make_shared<Running>()) {
    r_->core = coreOf(info[0]);
    Napi::Object o = info[1].As<Napi::Object>();
    worker::ExecutorOptions options;
    if (o.Get("concurrency").IsNumber()) options.concurrency = o.Get("concurrency").As<Napi::Number>().Uint32Value();
    if (o.Get("pollMs").IsNumber()) options.pollMillis = o.Get("pollMs").As<Napi::Number>().Int64Value();
    try {
      r_->core->started = true;
      r_->session = std::make_unique<host::HomeSession>(r_->core->workflows, r_->core->tasks,
                                                        r_->out, r_->core->config);
      host::readDatabaseEnvironment(r_->session->options());
      if (!r_->core->home.empty()) {
        r_->session->options().home = r_->core->home;
        r_->session->options().homeGiven = true;
      }
      kernel::EventStore& store = r_->session->store(true);
      r_->launcher = std::make_unique<host::RecordedApps>(*r_->session, store);
      r_->executor = std::make_unique<worker::Executor>(store, *r_->launcher, options);
    } catch (...) {
      throw Napi::Error(info.Env(), errorToJs(info.Env(), std::current_exception()));
    }
  }

 private:
  Napi::Value start(const Napi::CallbackInfo& info) {
    std::lock_guard lock(r_->mu);
    if (r_->thread.joinable() || r_->stopped) {
      throw Napi::Error(info.Env(), errorToJs(info.Env(), std::make_exception_ptr(FailedPreconditionError(
                                                             "a worker runs once: make a new one with app.worker()"))));
    }
    r_->core->door->ref(info.Env());
    Ref();  // not collected while it runs
    auto r = r_;
    r_->thread = std::thread([r] { r->executor->run(); });
    return info.Env().Undefined();
  }
  Napi::Value stop(const Napi::CallbackInfo& info) {
    double drain = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : 30;
    auto r = r_;
    bool wasRunning = r_->thread.joinable();
    Napi::Promise p = offThread(info.Env(), [r, drain]() -> Done {
      std::lock_guard lock(r->mu);
      r->stopped = true;
      if (r->thread.joinable()) {
        r->executor->stop(std::chrono::milliseconds(static_cast<int64_t>(drain * 1000)));
        r->thread.join();
      }
      return [](Napi::Env env) -> Napi::Value { return env.Undefined(); };
    });
    if (wasRunning) {
      r_->core->door->unref(info.Env());
      Unref();
    }
    return p;
  }
  Napi::Value runUntilIdle(const Napi::CallbackInfo& info) {
    auto r = r_;
    return offThread(info.Env(), [r]() -> Done {
      worker::IdleTally t = r->executor->runUntilIdle();
      return [t](Napi::Env env) -> Napi::Value {
        Napi::Object o = Napi::Object::New(env);
        o.Set("runs", static_cast<double>(t.runs));
        o.Set("startFailed", static_cast<double>(t.startFailed));
        o.Set("storeFailed", t.storeFailed);
        return o;
      };
    });
  }
  Napi::Value active(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(r_->executor->active()));
  }

  std::shared_ptr<Running> r_;
};

}  // namespace

Napi::Object initWorker(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = Worker::define(env);
  static Napi::FunctionReference ref = Napi::Persistent(cls);
  ref.SuppressDestruct();
  exports.Set("Worker", cls);
  return exports;
}

}  // namespace loom::node
