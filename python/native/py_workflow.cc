// Workflows written in Python: `@app.workflow("name")` registers a WorkflowFn that calls the
// Python function with a Context over the run's WorkflowContext. Every method of the context
// releases the GIL while the core journals, replays, waits or runs effects, and the Python
// functions it is handed (a step's fn) run with the GIL taken back. The replay contract is
// C++'s: the workflow function is run again from the top on every resume, and recorded steps
// return their recorded values (docs/python.md, "Replay").
#include <pybind11/stl.h>

#include <chrono>
#include <memory>

#include "loom/workflow/errors.h"
#include "py_app.h"
#include "py_callbacks.h"
#include "py_errors.h"
#include "py_json.h"

namespace loom::python {
namespace {

// What Python holds of a run's WorkflowContext: valid while its workflow function runs.
class Context {
 public:
  explicit Context(workflow::WorkflowContext& ctx) : ctx_(&ctx) {}
  void close() { ctx_ = nullptr; }
  workflow::WorkflowContext& get() const {
    if (ctx_ == nullptr) {
      throw FailedPreconditionError(
          "this workflow context belongs to a run that has returned; use a context only inside "
          "its workflow function");
    }
    return *ctx_;
  }

 private:
  workflow::WorkflowContext* ctx_;
};

py::object step(Context& c, std::string stepId, py::object fn) {
  return guarded([&] {
    workflow::WorkflowContext& ctx = c.get();
    std::string where = "step '" + stepId + "'";
    auto run = [&]() -> json::value {
      return withGil(where, [&] { return toJson(settled(fn()), "the output of " + where); });
    };
    json::value out;
    {
      py::gil_scoped_release release;
      out = ctx.step(stepId, run);
    }
    return toPython(out);
  });
}

py::object effect(Context& c, std::string stepId, std::string effectId, py::handle input) {
  return guarded([&] {
    json::value in = toJson(input, "the input of step '" + stepId + "'");
    json::value out;
    {
      py::gil_scoped_release release;
      out = c.get().effect(stepId, effectId, std::move(in));
    }
    return toPython(out);
  });
}

// [(step_id, effect_id, input)] -> [(output, error)]; error is the loom.StepFailedError.
py::list effects(Context& c, py::list calls, int maxConcurrent) {
  return guarded([&] {
    std::vector<workflow::WorkflowContext::EffectCall> native;
    for (py::handle call : calls) {
      auto t = call.cast<py::tuple>();
      std::string stepId = t[0].cast<std::string>();
      native.push_back({stepId, t[1].cast<std::string>(),
                        toJson(t[2], "the input of step '" + stepId + "'")});
    }
    std::vector<workflow::WorkflowContext::EffectOutcome> outcomes;
    {
      py::gil_scoped_release release;
      outcomes = c.get().effects(std::move(native), maxConcurrent);
    }
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
  });
}

template <class F>
auto released(Context& c, F&& f) {
  return guarded([&] {
    workflow::WorkflowContext& ctx = c.get();
    py::gil_scoped_release release;
    return f(ctx);
  });
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
        return toJson(out, "the output of " + where);
      });
    });
  });
}

}  // namespace

void bindWorkflows(py::module_& m) {
  py::class_<Context, std::shared_ptr<Context>>(m, "Context")
      .def_property_readonly("execution_id",
                             [](Context& c) { return guarded([&] { return c.get().executionId(); }); })
      .def_property_readonly("subject",
                             [](Context& c) { return guarded([&] { return c.get().subject(); }); })
      .def_property_readonly("replaying",
                             [](Context& c) { return guarded([&] { return c.get().replaying(); }); })
      .def("step", &step)
      .def("effect", &effect)
      .def("effects", &effects)
      .def("invoke_transient",
           [](Context& c, std::string effectId, py::handle input) {
             json::value in = guarded([&] { return toJson(input, "the transient call's input"); });
             return toPython(released(c, [&](auto& ctx) {
               return ctx.invokeTransient(effectId, std::move(in));
             }));
           })
      .def("wait_for_signal",
           [](Context& c, std::string name) {
             return toPython(released(c, [&](auto& ctx) { return ctx.awaitSignal(name); }));
           })
      .def("sleep",
           [](Context& c, std::string stepId, int64_t millis) {
             released(c, [&](auto& ctx) {
               ctx.sleep(stepId, std::chrono::milliseconds(millis));
               return 0;
             });
           })
      .def("park_until",
           [](Context& c, std::string reason, std::string stepId, std::string signal,
              std::string deadlineStepId, int64_t millis) -> py::object {
             auto out = released(c, [&](auto& ctx) {
               return ctx.parkUntil(reason, stepId, signal, deadlineStepId,
                                    std::chrono::milliseconds(millis));
             });
             if (!out) return py::none();
             return py::make_tuple(toPython(*out));
           });
  m.def("add_workflow", &registerWorkflow);
}

}  // namespace loom::python
