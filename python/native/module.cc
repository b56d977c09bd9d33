// loom._native: the C++ core under the `loom` Python package (docs/python.md).
#include <pybind11/pybind11.h>

#include "py_app.h"

PYBIND11_MODULE(_native, m) {
  m.doc() = "The Loom core, in process: use the `loom` package, not this module.";
  m.attr("VERSION") = LOOM_VERSION;
  loom::python::bindConfig(m);
  loom::python::bindApp(m);
  loom::python::bindWorkflows(m);
  loom::python::bindEffects(m);
  loom::python::bindWorker(m);
  loom::python::bindBench(m);
}
