// The workflow the durable-step benchmarks run (step_bench.cc, postgres_bench.cc):
// "bench.steps", {"steps": n} tiny journaled steps, and an empty task registry.
#pragma once

#include <string>

#include "loom/effects/task.h"
#include "loom/workflow/runtime.h"

namespace loom::bench {

// Adds "bench.steps" to `w` (also the C++ twin the Python and Node.js benchmarks compare with).
inline void addStepsWorkflow(workflow::WorkflowRegistry& w) {
  w.add("bench.steps", "", [](workflow::WorkflowContext& ctx) {
    int64_t n = ctx.input().at("steps").as_int64();
    for (int64_t i = 0; i < n; ++i) {
      ctx.step("s" + std::to_string(i), [i] { return json::value{{"i", i}}; });
    }
    return json::value(n);
  });
}

inline workflow::WorkflowRegistry& stepsWorkflow() {
  static workflow::WorkflowRegistry r = [] {
    workflow::WorkflowRegistry w;
    addStepsWorkflow(w);
    return w;
  }();
  return r;
}

inline effects::TaskRegistry& noTasks() {
  static effects::TaskRegistry t;
  return t;
}

}  // namespace loom::bench
