// Errors across the binding, both ways, so that a run fails, parks or retries exactly as it
// would in C++:
//  - a C++ exception reaching Python becomes the loom exception class of its type or code
//    (loom.StepFailedError, loom.ConfigValidationError, loom.UnavailableError, ...), with the
//    same message, holding the C++ exception itself; the core's control flow (a park, a
//    cancel) becomes loom.Suspended, a BaseException that `except Exception` does not catch.
//  - a Python exception reaching the core becomes the C++ exception it holds, if it came from
//    the core; else a loom::Error of its `code` (a loom.Error raised by user code:
//    loom.UnavailableError is retried as any unavailable error) or, for any other exception,
//    an internal error naming where it was raised and its type and message.
//  - a Python BaseException that is not an Exception (KeyboardInterrupt, SystemExit) is not
//    a failure of the step: it crosses the core as PythonInterrupt, which nothing records
//    (the run stops as if its process had, resumable), and is raised again as it was when it
//    reaches Python.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <string_view>

#include "py_callbacks.h"

namespace loom::python {

namespace py = pybind11;

// Deliberately not a std::exception: the core records nothing for it and lets it through.
struct PythonInterrupt {
  SharedPy exception;  // the KeyboardInterrupt, SystemExit, ...
};

// Sets `i`'s Python exception again and throws py::error_already_set. GIL held.
[[noreturn]] void raiseAgain(const PythonInterrupt& i);

// Sets the Python exception for `e` and throws py::error_already_set. GIL held.
[[noreturn]] void raiseInPython(std::exception_ptr e);

// The C++ exception for the Python exception `e` (see above); `where` names the callback
// ("tool 'search'"). GIL held.
[[noreturn]] void rethrowFromPython(py::error_already_set& e, std::string_view where);

// Runs `f` (a binding's body) so that any C++ exception leaves it as a Python exception.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (py::error_already_set&) {
    throw;
  } catch (const PythonInterrupt& i) {
    raiseAgain(i);
  } catch (...) {
    raiseInPython(std::current_exception());
  }
}

// Runs `f` on a core thread with the GIL held; a Python exception leaves it as C++.
template <class F>
auto withGil(std::string_view where, F&& f) -> decltype(f()) {
  py::gil_scoped_acquire gil;
  try {
    return f();
  } catch (py::error_already_set& e) {
    rethrowFromPython(e, where);
  }
}

}  // namespace loom::python
