// Workflows written in Python: `@app.workflow("name")` registers a WorkflowFn that calls the
// Python function with a Context over the run's WorkflowContext. Every method of the context
// releases the GIL while the core journals, replays, waits or runs effects, and the Python
// functions it is handed (a step's fn) run with the GIL taken back. The replay contract is
// C++'s: the workflow function is run again from the top on every resume, and recorded steps
// return their recorded values (docs/python.md, "Replay").
//
// A Context is valid while its workflow function runs: a call from a thread the workflow
// started that is still in flight when the function returns is waited for; a later call is
// refused. Once the core stopped the run (a park, a cancel), the context answers every further
// call, and the function's return, with that same stop: workflow code that catches
// loom.Suspended cannot go on as if the run had not parked.
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "loom/workflow/errors.h"
#include "py_app.h"
#include "py_callbacks.h"
#include "py_errors.h"
#include "py_json.h"

namespace loom::python {
namespace {

class Context {
 public:
  explicit Context(workflow::WorkflowContext& ctx) : ctx_(&ctx) {}

  // Runs `f(ctx)` with the GIL released; a stop of the run is kept (see above). GIL held.
  template <class F>
  auto call(F&& f) -> decltype(f(std::declval<workflow::WorkflowContext&>())) {
    return guarded([&] {
      refuseInsideStep();
      Use use(*this);
      py::gil_scoped_release release;
      try {
        return f(*ctx_);
      } catch (const std::exception&) {
        throw;
      } catch (...) {  // the core's control flow: the run stops here
        std::lock_guard lock(mu_);
        stopped_ = std::current_exception();
        throw;
      }
    });
  }
  // Waits for calls in flight (GIL released meanwhile), then refuses every later one. GIL held.
  void close() {
    py::gil_scoped_release release;
    std::unique_lock lock(mu_);
    closed_ = true;
    idle_.wait(lock, [&] { return inFlight_ == 0; });
  }
  // While step `id`'s function runs on this thread: the context may not be used from it (the
  // step is a call of the context already). Cleared when the function returns.
  struct InStep {
    InStep(Context& c, const std::string& id) : c(c) {
      std::lock_guard lock(c.mu_);
      c.step_ = id;
      c.stepThread_ = std::this_thread::get_id();
    }
    ~InStep() {
      std::lock_guard lock(c.mu_);
      c.step_.clear();
    }
    Context& c;
  };
  void refuseInsideStep() {
    std::lock_guard lock(mu_);
    if (!step_.empty() && stepThread_ == std::this_thread::get_id()) {
      throw InvalidArgumentError("the context was used inside step '" + step_ +
                                 "': a step's function may not call the context (it runs inside "
                                 "that call); call it from the workflow function");
    }
  }
  // The run's stop, when a call met one: the workflow's return must not hide it.
  std::exception_ptr stopped() {
    std::lock_guard lock(mu_);
    return stopped_;
  }

 private:
  struct Use {
    explicit Use(Context& c) : c(c) {
      std::lock_guard lock(c.mu_);
      if (c.stopped_) std::rethrow_exception(c.stopped_);
      if (c.closed_) {
        throw FailedPreconditionError(
            "this workflow context belongs to a run that has returned; use a context only "
            "inside its workflow function");
      }
      ++c.inFlight_;
    }
    ~Use() {
      std::lock_guard lock(c.mu_);
      if (--c.inFlight_ == 0) c.idle_.notify_all();
    }
    Context& c;
  };

  workflow::WorkflowContext* ctx_;
  std::mutex mu_;
  std::condition_variable idle_;
  int inFlight_ = 0;           // GUARDED_BY(mu_)
  bool closed_ = false;        // GUARDED_BY(mu_)
  std::exception_ptr stopped_; // GUARDED_BY(mu_)
  std::string step_;           // GUARDED_BY(mu_): the step whose function runs, if any
  std::thread::id stepThread_; // GUARDED_BY(mu_)
};

py::object step(Context& c, std::string stepId, py::object fn) {
  std::string where = "step '" + stepId + "'";
  auto run = [&]() -> json::value {
    return withGil(where, [&] {
      Context::InStep inStep(c, stepId);
      return toJson(settled(fn()), "the output of " + where);
    });
  };
  return toPython(c.call([&](auto& ctx) { return ctx.step(stepId, run); }));
}

py::object effect(Context& c, std::string stepId, std::string effectId, py::handle input) {
  json::value in = guarded([&] { return toJson(input, "the input of step '" + stepId + "'"); });
  return toPython(
      c.call([&](auto& ctx) { return ctx.effect(stepId, effectId, std::move(in)); }));
}

// [(step_id, effect_id, input)] -> [(output, error)]; error is the loom.StepFailedError.
py::list effects(Context& c, py::list calls, int maxConcurrent) {
  std::vector<workflow::WorkflowContext::EffectCall> native = guarded([&] {
    std::vector<workflow::WorkflowContext::EffectCall> out;
    for (py::handle call : calls) {
      auto t = call.cast<py::tuple>();
      std::string stepId = t[0].cast<std::string>();
      out.push_back({stepId, t[1].cast<std::string>(),
                     toJson(t[2], "the input of step '" + stepId + "'")});
    }
    return out;
  });
  auto outcomes = c.call([&](auto& ctx) { return ctx.effects(std::move(native), maxConcurrent); });
  py::list out;
  for (auto& o : outcomes) {
    py::object error = py::none();
    if (o.failure) {
      try {
        raiseInPython(o.failure);
      } catch (py::error_already_set& e) {
        error = e.value();
      }
    }
    out.append(py::make_tuple(o.failure ? py::none() : toPython(o.output), error));
  }
  return out;
}

void registerWorkflow(NativeApp& app, std::string name, std::string description, py::object fn) {
  guarded([&] {
    app.beforeRegistering("workflow '" + name + "'");
    SharedPy ref = keep(std::move(fn));
    std::string where = "workflow '" + name + "'";
    app.workflows().add(name, description, [ref, where](workflow::WorkflowContext& ctx) {
      return withGil(where, [&] {
        auto context = std::make_shared<Context>(ctx);
        struct Closer {
          std::shared_ptr<Context> c;
          ~Closer() { c->close(); }
        } closer{context};
        py::object out = settled(ref->get()(py::cast(context), toPython(ctx.input())));
        if (std::exception_ptr stop = context->stopped()) std::rethrow_exception(stop);
        return toJson(out, "the output of " + where);
      });
    });
  });
}

}  // namespace

void bindWorkflows(py::module_& m) {
  py::class_<Context, std::shared_ptr<Context>>(m, "Context")
      .def_property_readonly("execution_id",
                             [](Context& c) { return c.call([](auto& x) { return x.executionId(); }); })
      .def_property_readonly("subject",
                             [](Context& c) { return c.call([](auto& x) { return x.subject(); }); })
      .def_property_readonly("replaying",
                             [](Context& c) { return c.call([](auto& x) { return x.replaying(); }); })
      .def("step", &step)
      .def("effect", &effect)
      .def("effects", &effects)
      .def("invoke_transient",
           [](Context& c, std::string effectId, py::handle input) {
             json::value in = guarded([&] { return toJson(input, "the transient call's input"); });
             return toPython(
                 c.call([&](auto& ctx) { return ctx.invokeTransient(effectId, std::move(in)); }));
           })
      .def("patched",
           [](Context& c, std::string changeId) {
             return c.call([&](auto& ctx) { return ctx.patched(changeId); });
           })
      .def("wait_for_signal",
           [](Context& c, std::string name) {
             return toPython(c.call([&](auto& ctx) { return ctx.awaitSignal(name); }));
           })
      .def("sleep",
           [](Context& c, std::string stepId, int64_t millis) {
             c.call([&](auto& ctx) {
               ctx.sleep(stepId, std::chrono::milliseconds(millis));
               return 0;
             });
           })
      .def("park_until",
           [](Context& c, std::string reason, std::string stepId, std::string signal,
              std::string deadlineStepId, int64_t millis) -> py::object {
             auto out = c.call([&](auto& ctx) {
               return ctx.parkUntil(reason, stepId, signal, deadlineStepId,
                                    std::chrono::milliseconds(millis));
             });
             if (!out) return py::none();
             return py::make_tuple(toPython(*out));
           });
  m.def("add_workflow", &registerWorkflow);
}

}  // namespace loom::python
