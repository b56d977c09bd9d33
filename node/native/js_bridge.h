// The bridge between Node's JavaScript thread and the core's threads (docs/typescript.md,
// ADR 0028). The JavaScript thread is never blocked: every core call runs on a thread of its
// own and settles a promise (offThread); a core thread that needs JavaScript (a workflow, a
// step's function, a tool, a model) sends the call through the app's Door (a thread-safe
// function) and waits on a Channel until the function's value or promise settles. While it
// waits, the channel runs what JavaScript posts to that thread: a workflow's ctx.step() runs
// on the core thread that runs the workflow, in the order JavaScript asked.
#pragma once

#include <napi.h>

#include <thread>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "loom/json/json.h"

namespace loom::node {

// --- values ------------------------------------------------------------------------------
// JavaScript -> JSON: only what JSON holds (null, booleans, finite numbers, strings, arrays,
// plain objects), at most json::kMaxValueDepth deep; undefined, a BigInt, a function, a
// symbol, a Date or Map, NaN, a cycle: InvalidArgumentError naming `what` and where ($.a[2]).
json::value toJson(Napi::Value v, std::string_view what);
Napi::Value toJs(Napi::Env env, const json::value& v);

// --- errors ------------------------------------------------------------------------------
// The JavaScript error for a C++ exception: an instance of the package's class for its type
// or code (made by the factory lib/errors.mjs registers), carrying the exception, so that
// when it comes back (a workflow that lets a StepFailedError through) the core gets it as it
// was. The core's control flow (a park, a cancel) becomes a Suspended error.
Napi::Value errorToJs(Napi::Env env, std::exception_ptr e);
// The C++ exception for what JavaScript threw or rejected with: the one it carries, else a
// loom::Error of its `code` (a LoomError), else an internal error naming `where`.
std::exception_ptr errorFromJs(Napi::Value error, const std::string& where);
void setErrorFactory(Napi::Function factory);

// Runs `body` on the JavaScript thread; a C++ exception leaves it as the package's error.
template <class F>
Napi::Value jsCall(const Napi::CallbackInfo& info, F&& body) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (...) {
    throw Napi::Error(info.Env(), errorToJs(info.Env(), std::current_exception()));
  }
}

// --- threads -----------------------------------------------------------------------------
class Door {
 public:
  explicit Door(Napi::Env env);
  ~Door();
  // Runs `fn` on the JavaScript thread soon; false when the environment is gone.
  bool send(std::function<void(Napi::Env)> fn);
  // True on the JavaScript thread while the environment lives: what would be sent may run now
  // (a reference released there is deleted at once, without waking the event loop).
  bool here() const { return !*gone_ && std::this_thread::get_id() == jsThread_; }
  // Keeps the process alive while core work is in flight (a worker runs).
  void ref(Napi::Env env) { tsfn_.Ref(env); }
  void unref(Napi::Env env) { tsfn_.Unref(env); }

 private:
  // Set when Node finalizes the function (the environment ends): nothing may use it then.
  std::shared_ptr<std::atomic<bool>> gone_ = std::make_shared<std::atomic<bool>>(false);
  std::thread::id jsThread_ = std::this_thread::get_id();
  Napi::ThreadSafeFunction tsfn_;
};

class Channel {
 public:
  // JavaScript thread: runs `task` on the waiting core thread. When the channel is closed, or
  // closes before it runs, `drop` is called instead, with the run's stop (or null).
  void post(std::function<void()> task, std::function<void(std::exception_ptr)> drop);
  // The call's outcome: a value, or an error.
  void settle(json::value value);
  void fail(std::exception_ptr error);
  // Core thread, from a task: the run stops here (a park, a cancel); wait() throws it.
  void stop(std::exception_ptr stop);
  // Core thread: runs posted tasks until the call settles (or stops); its value, or throws.
  json::value wait();
  void close();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  struct Task {
    std::function<void()> run;
    std::function<void(std::exception_ptr)> drop;
  };
  std::deque<Task> tasks_;                   // GUARDED_BY(mu_)
  std::optional<json::value> value_;         // GUARDED_BY(mu_)
  std::exception_ptr error_;                 // GUARDED_BY(mu_)
  std::exception_ptr stopped_;               // GUARDED_BY(mu_)
  bool closed_ = false;                      // GUARDED_BY(mu_)
};

// Core thread: calls JavaScript (`call` runs on its thread and returns a value or a promise)
// and waits on `channel`; `where` names the callee in errors.
json::value callJs(Door& door, const std::shared_ptr<Channel>& channel, std::string where,
                   std::function<Napi::Value(Napi::Env)> call);

// JavaScript thread: calls `call` now and settles `channel` with its value, or its promise's
// value once it settles, or what it threw or rejected with (callJs's other half).
void callInto(Napi::Env env, const std::shared_ptr<Channel>& channel, const std::string& where,
              const std::function<Napi::Value(Napi::Env)>& call);

// JavaScript thread: runs `work` on a thread of its own; its result settles the promise
// (through `done`, on the JavaScript thread), its exception rejects it (errorToJs).
using Done = std::function<Napi::Value(Napi::Env)>;
Napi::Promise offThread(Napi::Env env, std::function<Done()> work);

}  // namespace loom::node
