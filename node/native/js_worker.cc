// app.worker(): the Executor in this Node.js process, over a host::HomeSession and
// host::RecordedApps as `loom worker` runs it. Nothing it does blocks the event loop: the home
// is opened, the executor run, stopped and joined, and finally destroyed, on threads of their
// own. While it runs it keeps the process alive (the app's Door is referenced, counted over
// the app's workers). A worker runs once: start() then stop(), or runUntilIdle().
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
  worker::ExecutorOptions options;
  std::ostringstream out;
  std::unique_ptr<host::HomeSession> session;
  std::unique_ptr<host::RecordedApps> launcher;
  std::unique_ptr<worker::Executor> executor;
  std::atomic<worker::Executor*> live{nullptr};  // for `active`
  std::mutex mu;  // the executor's lifetime: opened, run, stopped
  bool stopRequested = false;  // under mu: a stop that came before open() means never open
  std::thread thread;

  // Opens the home and makes the executor (a thread of its own).
  void open() {
    session = std::make_unique<host::HomeSession>(core->workflows, core->tasks, out, core->config);
    core->applyHome(session->options());
    kernel::EventStore& store = session->store(true);
    launcher = std::make_unique<host::RecordedApps>(*session, store);
    executor = std::make_unique<worker::Executor>(store, *launcher, options);
    live = executor.get();
  }
};

enum class State { kIdle, kRunning, kStopped };

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
    if (o.Get("concurrency").IsNumber()) r_->options.concurrency = o.Get("concurrency").As<Napi::Number>().Uint32Value();
    if (o.Get("pollMs").IsNumber()) r_->options.pollMillis = o.Get("pollMs").As<Napi::Number>().Int64Value();
    r_->core->started = true;
  }
  // Collected: whatever it still holds goes on a thread of its own (its runs may be waiting
  // for this event loop, which must not wait for them).
  ~Worker() override {
    std::thread([r = std::move(r_)]() mutable {
      {
        std::lock_guard lock(r->mu);
        r->stopRequested = true;
        if (r->executor) r->executor->stop(std::chrono::milliseconds(0));
      }
      if (r->thread.joinable()) r->thread.join();
      r.reset();
    }).detach();
  }

 private:
  Napi::Value refuse(Napi::Env env, const std::string& why) {
    throw Napi::Error(env, errorToJs(env, std::make_exception_ptr(FailedPreconditionError(why))));
  }
  Napi::Value start(const Napi::CallbackInfo& info) {
    if (state_ != State::kIdle) return refuse(info.Env(), "a worker runs once: make a new one with app.worker()");
    state_ = State::kRunning;
    Ref();  // not collected while it runs, referenced or not: stop() lets it go
    r_->core->workerStarted(info.Env());
    auto r = r_;
    r_->thread = std::thread([r] {
      {
        std::lock_guard lock(r->mu);
        if (r->stopRequested) return;
        try {
          r->open();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "loom: the worker could not open its home: %s\n", e.what());
          return;
        }
      }
      r->executor->run();
    });
    return info.This();
  }
  Napi::Value stop(const Napi::CallbackInfo& info) {
    double drain = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : 30;
    bool wasRunning = state_ == State::kRunning;
    state_ = State::kStopped;
    if (wasRunning) r_->core->workerStopped(info.Env());
    auto r = r_;
    Worker* self = this;
    return offThread(info.Env(), [r, drain, wasRunning, self]() -> Done {
      if (wasRunning) {
        {
          std::lock_guard lock(r->mu);  // the executor exists, or never will
          r->stopRequested = true;
          if (r->executor) r->executor->stop(std::chrono::milliseconds(static_cast<int64_t>(drain * 1000)));
        }
        if (r->thread.joinable()) r->thread.join();
      }
      return [self, wasRunning](Napi::Env env) -> Napi::Value {
        if (wasRunning) self->Unref();
        return env.Undefined();
      };
    });
  }
  Napi::Value runUntilIdle(const Napi::CallbackInfo& info) {
    if (state_ != State::kIdle) return refuse(info.Env(), "a worker runs once: make a new one with app.worker()");
    state_ = State::kStopped;
    Ref();  // not collected before it is done (a collected worker stops its runs)
    auto r = r_;
    Worker* self = this;
    return offThread(info.Env(), [r, self]() -> Done {
      worker::IdleTally t;
      try {
        {
          std::lock_guard lock(r->mu);
          r->open();
        }
        t = r->executor->runUntilIdle();
      } catch (...) {
        return [self, error = std::current_exception()](Napi::Env) -> Napi::Value {
          self->Unref();
          std::rethrow_exception(error);
        };
      }
      return [t, self](Napi::Env env) -> Napi::Value {
        self->Unref();
        Napi::Object o = Napi::Object::New(env);
        o.Set("runs", static_cast<double>(t.runs));
        o.Set("startFailed", static_cast<double>(t.startFailed));
        o.Set("storeFailed", t.storeFailed);
        return o;
      };
    });
  }
  Napi::Value active(const Napi::CallbackInfo& info) {
    worker::Executor* e = r_->live.load();
    return Napi::Number::New(info.Env(), e ? static_cast<double>(e->active()) : 0);
  }

  std::shared_ptr<Running> r_;
  State state_ = State::kIdle;  // the event loop's
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
