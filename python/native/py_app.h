// The binding's native side of loom.App (python/loom/app.py): the registries a Python program
// fills (workflows, tools, models, agents), its validated Config and home, and the operations,
// which run the `loom` command line's subcommands in this process (cli::invoke), so a run
// started from Python is the same run `loom ls`, `loom log` and `loom serve` show, with the
// same codes and messages. Internal to the binding.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "loom/agent/model.h"
#include "loom/agent/tool.h"
#include "loom/app/config.h"
#include "loom/effects/middleware.h"
#include "loom/effects/task.h"
#include "loom/workflow/workflow.h"

namespace loom::host {
struct HomeOptions;
}

namespace loom::python {

namespace py = pybind11;

class NativeApp {
 public:
  // `home`: empty for the config's storage.home.
  NativeApp(std::shared_ptr<const app::Config> config, std::string home)
      : config_(std::move(config)), home_(std::move(home)) {}

  workflow::WorkflowRegistry& workflows() { return workflows_; }
  effects::TaskRegistry& tasks() { return tasks_; }
  // The Python tools' definitions by name, for the agents that offer them.
  std::map<std::string, agent::ToolDefinition, std::less<>>& tools() { return tools_; }
  // Keeps a started MCP server's client (its tools are registered) while the app lives.
  void keepServer(std::shared_ptr<void> client) { servers_.push_back(std::move(client)); }
  const std::shared_ptr<const app::Config>& config() const { return config_; }
  const std::string& home() const { return home_; }
  // Refuses (FailedPreconditionError) once a run or worker used the registries.
  void beforeRegistering(std::string_view what) const;
  // `loom <args>` in this process, as the program's command line (GIL released by the
  // caller): the exit code and what it printed. Throws the subcommand's error.
  std::pair<int, std::string> invoke(std::vector<std::string> args);
  // The whole command line (`python -m loom --app module:app ...`): loom::cli::main.
  int main(std::vector<std::string> argv);
  // The session options a worker of this app opens its home with.
  void applyHome(host::HomeOptions& options) const;
  void markStarted() { started_ = true; }
  // Whether `model` is the model registered under its id (several agents may share one).
  bool hasModel(const std::shared_ptr<agent::Model>& model) const;
  void keepModel(std::shared_ptr<agent::Model> model) { models_[model->id()] = std::move(model); }

 private:
  workflow::WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  std::map<std::string, agent::ToolDefinition, std::less<>> tools_;
  std::vector<std::shared_ptr<void>> servers_;  // MCP clients, stopped when the app goes
  std::map<std::string, std::shared_ptr<agent::Model>, std::less<>> models_;
  std::shared_ptr<const app::Config> config_;
  std::string home_;
  std::atomic<bool> started_{false};
};

// Python objects as the core's SPIs (py_effects.cc): one with invoke(ctx, input, next) as an
// effect middleware; one with complete(request) (or complete(request, ctx) when
// `takesContext`) as a Model under `id`; a callable as a Tool called with its arguments as
// keyword arguments (its result tainted "tool:<name>" when `untrusted`).
std::shared_ptr<effects::Middleware> pythonMiddleware(py::object middleware);
std::shared_ptr<agent::Model> pythonModel(std::string id, py::object model, bool takesContext);
std::shared_ptr<agent::Tool> pythonTool(agent::ToolDefinition definition, bool untrusted,
                                        py::object fn);

void bindConfig(py::module_& m);    // py_config.cc
void bindApp(py::module_& m);       // py_app.cc
void bindWorkflows(py::module_& m); // py_workflow.cc
void bindEffects(py::module_& m);   // py_effects.cc: tools, models, middleware, agents
void bindWorker(py::module_& m);    // py_worker.cc
void bindBench(py::module_& m);     // py_bench.cc: C++ twins of bench/python_bench.py

}  // namespace loom::python
