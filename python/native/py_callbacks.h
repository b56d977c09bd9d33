// Python objects the core keeps and calls: workflows, tools, models, middleware and config
// callbacks. The core copies and drops them on its own threads, so each is held through a
// PyRef, whose reference is released with the GIL held. A callable may be a coroutine function
// (async def): its coroutine is run to completion on the calling core thread's own event loop
// (loom._aio), so one run's awaits never hold up another's.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <utility>

namespace loom::python {

namespace py = pybind11;

class PyRef {
 public:
  explicit PyRef(py::object object) : object_(std::move(object)) {}
  ~PyRef() {
    if (!Py_IsInitialized()) {
      object_.release();  // the interpreter is gone: nothing to give back
      return;
    }
    py::gil_scoped_acquire gil;
    object_ = py::object();
  }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  const py::object& get() const { return object_; }

 private:
  py::object object_;
};

using SharedPy = std::shared_ptr<PyRef>;
inline SharedPy keep(py::object object) { return std::make_shared<PyRef>(std::move(object)); }

// The value of `result`, awaited first when it is awaitable (GIL held).
inline py::object settled(py::object result) {
  if (!py::hasattr(result, "__await__")) return result;
  return py::module_::import("loom._aio").attr("wait")(result);
}

}  // namespace loom::python
