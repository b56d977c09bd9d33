// C++ twins of what bench/python_bench.py runs in Python, registered on a Python App so that
// both run in one process, on one home, with one config, in interleaved rounds: the ratio of
// the binding's cost to the core's comes from one run (docs/benchmarks.md, "Python").
//  - "bench.steps": {"steps": n} tiny journaled steps ({"i": n} outputs), as bench/step_bench.
//  - add_bench_agent: an agent whose model calls bench_fetch_report with page = turn for
//    `pages` turns, then answers (each turn taking latencyMillis, as a real model's would);
//    the tool returns 1.5-4 kB (bench/agent_bench.cc's generator).
#include <pybind11/stl.h>

#include <chrono>
#include <thread>

#include "bench/report_pages.h"
#include "bench/steps_workflow.h"
#include "effects/step_ids.h"
#include "loom/agent/agent_loop.h"
#include "loom/agent/model.h"
#include "loom/agent/tool.h"
#include "py_app.h"
#include "py_errors.h"

namespace loom::python {
namespace {

using bench::fetchReport;

class PagesModel : public agent::Model {
 public:
  PagesModel(int64_t pages, int64_t latencyMillis) : pages_(pages), latency_(latencyMillis) {}
  const std::string& id() const override { return id_; }
  json::value complete(const effects::EffectContext& ctx, const agent::ModelRequest&) override {
    int64_t turn = effects::parseAgentStepId(ctx.stepId)->turn;
    if (latency_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(latency_));
    if (turn > pages_) return json::object{{"role", "assistant"}, {"content", "read every page"}};
    return json::object{
        {"role", "assistant"},
        {"toolCalls", json::array{json::object{{"id", "call_" + std::to_string(turn)},
                                               {"name", "bench_fetch_report"},
                                               {"arguments", json::object{{"page", turn}}}}}}};
  }

 private:
  int64_t pages_;
  int64_t latency_;
  std::string id_ = "bench_pages";
};

}  // namespace

void bindBench(py::module_& m) {
  m.def("add_bench_workflows", [](NativeApp& app) {
    guarded([&] {
      app.beforeRegistering("bench.steps");
      bench::addStepsWorkflow(app.workflows());
    });
  });
  m.def("add_bench_agent", [](NativeApp& app, std::string name, int64_t pages,
                              int64_t latencyMillis) {
    guarded([&] {
      app.beforeRegistering("agent '" + name + "'");
      agent::ToolDefinition d{"bench_fetch_report", "Fetches one page of the report.",
                              json::object{{"type", "object"}}};
      agent::registerTool(app.tasks(),
                          std::make_shared<agent::FunctionTool>(
                              d, [](const effects::EffectContext&, const json::value& a) {
                                return fetchReport(a.at("page").to_number<int64_t>());
                              }));
      agent::registerModel(app.tasks(), std::make_shared<PagesModel>(pages, latencyMillis));
      agent::AgentOptions o;
      o.model = "bench_pages";
      o.tools = {d};
      o.maxTurns = pages + 1;
      agent::registerAgentWorkflow(app.workflows(), name, std::move(o));
    });
  });
}

}  // namespace loom::python
