// The Model and Tool conformance suites (tests/conformance), unchanged, for a model and a tool
// written in Python: the objects a user writes, made into the core's Model and Tool by the
// binding (py_effects.cc), called from the suites' threads as the agent loop calls them.
// The interpreter is embedded; `loom.errors` is imported from the source tree (the stub
// package below), so no second copy of the native module is loaded.
#include <gtest/gtest.h>
#include <pybind11/embed.h>

#include "model_conformance.h"
#include "py_app.h"
#include "tool_conformance.h"

namespace py = pybind11;

PYBIND11_EMBEDDED_MODULE(loom_conformance_native, m) { loom::python::bindEffects(m); }

namespace loom::agent::conformance {
namespace {

constexpr const char* kPythonObjects = R"(
import loom.errors

class ScriptedTurns:
    """Answers turn i (from the step id) as turns[i - 1] says: an answer or one tool call."""
    def __init__(self, turns):
        self.turns = turns

    def complete(self, request, ctx):
        turn = int(ctx.step_id.split(":")[1])
        answer, tool, arguments = self.turns[turn - 1]
        if tool:
            return {"role": "assistant", "content": None,
                    "toolCalls": [{"id": f"call_{turn}", "name": tool, "arguments": arguments}]}
        return {"role": "assistant", "content": answer}

class Overloaded:
    def complete(self, request):
        raise loom.errors.UnavailableError("the model server is overloaded")

class Malformed:
    def complete(self, request):
        return {"role": "assistant", "toolCalls": "not a list"}

def echo(text):
    return {"echoed": text}

def fails(text):
    raise ValueError("the probe failed")
)";

py::object objects() {
  static py::object* module = [] {
    py::dict scope;
    py::exec(kPythonObjects, scope);
    auto* m = new py::object(py::module_::import("types").attr("SimpleNamespace")(**scope));
    return m;
  }();
  return *module;
}

ModelMade pythonModelOf(const char* cls, py::object arg = py::none()) {
  py::gil_scoped_acquire gil;
  py::object obj = arg.is_none() ? objects().attr(cls)() : objects().attr(cls)(arg);
  bool takesContext = std::string(cls) == "ScriptedTurns";
  return ModelMade{loom::python::pythonModel("python", obj, takesContext), nullptr};
}

ModelFactory python() {
  return {"Python",
          [](const std::vector<Turn>& turns) {
            py::gil_scoped_acquire gil;
            py::list script;
            for (const auto& t : turns) {
              py::dict arguments;
              for (const auto& [k, v] : t.arguments) {
                arguments[py::str(std::string(k))] = py::module_::import("json").attr("loads")(
                    json::toText(v));
              }
              script.append(py::make_tuple(t.answer, t.tool, arguments));
            }
            return pythonModelOf("ScriptedTurns", script);
          },
          [] { return pythonModelOf("Overloaded"); },
          [] { return pythonModelOf("Malformed"); }};
}

agent::ToolDefinition definition(std::string name) {
  return {std::move(name), "Conformance probe", json::object{{"type", "object"}}};
}

ToolFactory pythonTools() {
  return {"Python",
          [] {
            py::gil_scoped_acquire gil;
            return ToolMade{
                loom::python::pythonTool(definition("echo"), false, objects().attr("echo")),
                nullptr};
          },
          [] {
            py::gil_scoped_acquire gil;
            return ToolMade{
                loom::python::pythonTool(definition("fails"), false, objects().attr("fails")),
                nullptr};
          }};
}

INSTANTIATE_TEST_SUITE_P(Models, ModelConformance, ::testing::Values(python()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Tools, ToolConformance, ::testing::Values(pythonTools()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace loom::agent::conformance

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  py::scoped_interpreter interpreter;
  // `loom` as a bare package of the source tree: loom.errors without loom/__init__.py.
  py::module_ types = py::module_::import("types");
  py::object package = types.attr("ModuleType")("loom");
  package.attr("__path__") = py::make_tuple(std::string(LOOM_PYTHON_SOURCE_DIR) + "/loom");
  py::module_::import("sys").attr("modules")["loom"] = package;
  py::module_::import("loom_conformance_native");
  int result = 0;
  {
    py::gil_scoped_release release;  // the suites' threads take it as the core's would
    result = RUN_ALL_TESTS();
  }
  return result;
}
