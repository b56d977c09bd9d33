// app.worker(): the Executor in this Python process (docs/operations.md, "Workers"). It claims
// what nobody runs on the app's home (submitted, orphaned, due timers and retries) and runs
// each on a thread of its own, through host::RecordedApps as `loom worker` does: runs of this
// program's Python workflows on its registries, runs of recorded agent app files on theirs.
// Python code runs with the GIL taken per call, so runs interleave between their steps.
// stop() and the context manager's exit drain, then release what still runs (resumable at
// once by the next worker).
//
// The executor reports each run while it holds its own lock, so on_run is not called there:
// reports go to a queue that a thread of this worker hands to Python, and every method that
// waits for the executor releases the GIL first. A worker runs once: start() or
// run_until_idle(), then stop().
#include <pybind11/stl.h>

#include <condition_variable>
#include <cstdio>
#include <deque>
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

// Hands the executor's reports to Python's on_run on a thread of its own.
class Reports {
 public:
  explicit Reports(SharedPy onRun) : onRun_(std::move(onRun)) {
    if (onRun_) thread_ = std::thread([this] { deliver(); });
  }
  ~Reports() { close(); }
  void push(const worker::RunReport& r) {
    if (!onRun_) return;
    std::lock_guard lock(mu_);
    queue_.push_back(r);
    cv_.notify_one();
  }
  // Delivers what is queued, then ends the thread. Without the GIL.
  void close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void deliver() {
    for (;;) {
      worker::RunReport r;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
        if (queue_.empty()) return;
        r = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        withGil("the worker's on_run", [&] {
          py::dict d;
          d["id"] = r.executionId, d["workflow"] = r.workflow, d["outcome"] = r.outcome;
          d["start_failed"] = r.startFailed;
          onRun_->get()(d);
        });
      } catch (const PythonInterrupt&) {  // on_run raised SystemExit: no more reports
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "loom: warning: the worker's on_run raised: %s\n", e.what());
      }
    }
  }

  SharedPy onRun_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<worker::RunReport> queue_;  // GUARDED_BY(mu_)
  bool closed_ = false;                  // GUARDED_BY(mu_)
  std::thread thread_;
};

class Worker {
 public:
  // Without the GIL.
  Worker(std::shared_ptr<NativeApp> app, worker::ExecutorOptions options, SharedPy onRun)
      : app_(std::move(app)),
        session_(std::make_unique<host::HomeSession>(app_->workflows(), app_->tasks(), out_,
                                                     app_->config())),
        reports_(std::make_unique<Reports>(std::move(onRun))) {
    app_->markStarted();
    app_->applyHome(session_->options());
    options.onRun = [reports = reports_.get()](const worker::RunReport& r) { reports->push(r); };
    store_ = &session_->store(true);
    launcher_ = std::make_unique<host::RecordedApps>(*session_, *store_);
    executor_ = std::make_unique<worker::Executor>(*store_, *launcher_, std::move(options));
  }
  // With or without the GIL: the runs being stopped may need it.
  ~Worker() {
    if (Py_IsInitialized() && PyGILState_Check()) {
      py::gil_scoped_release release;
      teardown();
    } else {
      teardown();
    }
  }

  void start() {
    std::lock_guard lock(mu_);
    if (used_) throw FailedPreconditionError("a worker runs once: make a new one with app.worker()");
    used_ = true;
    thread_ = std::thread([this] { executor_->run(); });
  }
  // Without the GIL.
  void stop(double drainSeconds) {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) return;
    executor_->stop(std::chrono::milliseconds(static_cast<int64_t>(drainSeconds * 1000)));
    thread_.join();
  }
  // Without the GIL.
  worker::IdleTally runUntilIdle() {
    {
      std::lock_guard lock(mu_);
      if (used_) throw FailedPreconditionError("a worker runs once: make a new one with app.worker()");
      used_ = true;
    }
    return executor_->runUntilIdle();
  }
  std::size_t active() const { return executor_->active(); }
  void notify() { executor_->notify(); }

 private:
  void teardown() {
    stop(0);
    executor_.reset();  // waits for the runs' threads
    launcher_.reset();
    reports_->close();
    session_.reset();
  }

  std::shared_ptr<NativeApp> app_;
  std::ostringstream out_;
  std::unique_ptr<host::HomeSession> session_;
  std::unique_ptr<Reports> reports_;
  kernel::EventStore* store_ = nullptr;
  std::unique_ptr<host::RecordedApps> launcher_;
  std::unique_ptr<worker::Executor> executor_;
  std::mutex mu_;
  bool used_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace

void bindWorker(py::module_& m) {
  py::class_<Worker>(m, "Worker")
      .def(py::init([](std::shared_ptr<NativeApp> app, std::size_t concurrency, int64_t pollMs,
                       std::map<std::string, std::size_t> limits, py::object onRun) {
             SharedPy reports = onRun.is_none() ? nullptr : keep(std::move(onRun));
             return guarded([&] {
               worker::ExecutorOptions o;
               o.concurrency = concurrency;
               o.pollMillis = pollMs;
               o.perWorkflow = {limits.begin(), limits.end()};
               py::gil_scoped_release release;
               return std::make_unique<Worker>(app, std::move(o), std::move(reports));
             });
           }))
      .def("start", [](Worker& w) { guarded([&] { w.start(); }); })
      .def("stop", &Worker::stop, py::call_guard<py::gil_scoped_release>())
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
      .def_property_readonly("active", &Worker::active, py::call_guard<py::gil_scoped_release>())
      .def("notify", &Worker::notify, py::call_guard<py::gil_scoped_release>());
}

}  // namespace loom::python
