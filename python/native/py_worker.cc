// app.worker(): the Executor in this Python process (docs/operations.md, "Workers"). It claims
// what nobody runs on the app's home (submitted, orphaned, due timers and retries) and runs
// each on a thread of its own, through host::RecordedApps as `loom worker` does: runs of this
// program's Python workflows on its registries, runs of recorded agent app files on theirs.
// Python code runs with the GIL taken per call, so runs interleave between their steps.
// stop() and the context manager's exit drain, then release what still runs (resumable at
// once by the next worker).
#include <pybind11/stl.h>

#include <cstdio>
#include <sstream>
#include <thread>

#include "host/home_session.h"
#include "host/recorded_apps.h"
#include "loom/worker/executor.h"
#include "py_app.h"
#include "py_callbacks.h"
#include "py_errors.h"

namespace loom::python {
namespace {

class Worker {
 public:
  Worker(std::shared_ptr<NativeApp> app, worker::ExecutorOptions options, py::object onRun)
      : app_(std::move(app)),
        session_(app_->workflows(), app_->tasks(), out_, app_->config()) {
    app_->markStarted();
    app_->applyHome(session_.options());
    if (!onRun.is_none()) {
      SharedPy ref = keep(std::move(onRun));
      options.onRun = [ref](const worker::RunReport& r) {
        try {
          withGil("the worker's on_run", [&] {
            py::dict d;
            d["id"] = r.executionId, d["workflow"] = r.workflow, d["outcome"] = r.outcome;
            d["start_failed"] = r.startFailed;
            ref->get()(d);
          });
        } catch (const std::exception& e) {
          std::fprintf(stderr, "loom: warning: on_run raised: %s\n", e.what());
        }
      };
    }
    store_ = &session_.store(true);
    launcher_ = std::make_unique<host::RecordedApps>(session_, *store_);
    executor_ = std::make_unique<worker::Executor>(*store_, *launcher_, std::move(options));
  }
  ~Worker() {
    if (Py_IsInitialized() && PyGILState_Check()) {  // runs may need the GIL to stop
      py::gil_scoped_release release;
      stop(0);
    } else {
      stop(0);
    }
  }

  void start() {
    if (thread_.joinable()) throw FailedPreconditionError("the worker is running already");
    thread_ = std::thread([this] { executor_->run(); });
  }
  void stop(double drainSeconds) {
    if (!thread_.joinable()) return;
    executor_->stop(std::chrono::milliseconds(static_cast<int64_t>(drainSeconds * 1000)));
    thread_.join();
  }
  worker::IdleTally runUntilIdle() { return executor_->runUntilIdle(); }
  std::size_t active() const { return executor_->active(); }
  void notify() { executor_->notify(); }

 private:
  std::shared_ptr<NativeApp> app_;
  std::ostringstream out_;
  host::HomeSession session_;
  kernel::EventStore* store_ = nullptr;
  std::unique_ptr<host::RecordedApps> launcher_;
  std::unique_ptr<worker::Executor> executor_;
  std::thread thread_;
};

}  // namespace

void bindWorker(py::module_& m) {
  py::class_<Worker>(m, "Worker")
      .def(py::init([](std::shared_ptr<NativeApp> app, std::size_t concurrency, int64_t pollMs,
                       std::map<std::string, std::size_t> limits, py::object onRun) {
             return guarded([&] {
               worker::ExecutorOptions o;
               o.concurrency = concurrency;
               o.pollMillis = pollMs;
               o.perWorkflow = {limits.begin(), limits.end()};
               py::gil_scoped_release release;
               return std::make_unique<Worker>(app, std::move(o), std::move(onRun));
             });
           }))
      .def("start", [](Worker& w) { guarded([&] { w.start(); }); })
      .def("stop",
           [](Worker& w, double drain) {
             py::gil_scoped_release release;
             w.stop(drain);
           })
      .def("run_until_idle",
           [](Worker& w) {
             worker::IdleTally t = guarded([&] {
               py::gil_scoped_release release;
               return w.runUntilIdle();
             });
             py::dict d;
             d["runs"] = t.runs, d["start_failed"] = t.startFailed;
             d["store_failed"] = t.storeFailed;
             return d;
           })
      .def_property_readonly("active", &Worker::active)
      .def("notify", &Worker::notify);
}

}  // namespace loom::python
