#include "py_errors.h"

#include <string>

#include "host/error_class.h"
#include "loom/app/config.h"
#include "loom/compliance/erase.h"
#include "loom/effects/errors.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/lease.h"
#include "loom/util/error.h"
#include "loom/workflow/errors.h"

namespace loom::python {
namespace {

constexpr const char* kNativeAttr = "_loom_native";

py::capsule holding(std::exception_ptr e) {
  return py::capsule(new std::exception_ptr(std::move(e)), "loom.native_exception",
                     [](PyObject* capsule) {
                       delete static_cast<std::exception_ptr*>(
                           PyCapsule_GetPointer(capsule, "loom.native_exception"));
                     });
}

// The exception instance for a loom::Error, with what the Python class exposes.
py::object errorObject(const Error& e) {
  py::module_ errors = py::module_::import("loom.errors");
  py::object cls = errors.attr(std::string(host::errorClassName(e)).c_str());
  py::object obj = cls(std::string(e.what()));
  obj.attr("code") = std::string(errorCodeName(e.code()));
  if (const auto* invalid = dynamic_cast<const app::ConfigValidationError*>(&e)) {
    py::list issues;
    for (const auto& issue : invalid->issues()) {
      issues.append(errors.attr("ConfigIssue")(issue.path, issue.message));
    }
    obj.attr("issues") = issues;
    obj.attr("origin") = invalid->origin();
  }
  if (const auto* failed = dynamic_cast<const workflow::StepFailedError*>(&e)) {
    obj.attr("step_id") = failed->stepId();
    obj.attr("cause") = std::string(errorCodeName(failed->cause()));
    obj.attr("cause_message") = failed->causeMessage();
  }
  return obj;
}

}  // namespace

void raiseAgain(const PythonInterrupt& i) {
  py::object exception = i.exception->get();
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
  throw py::error_already_set();
}

void raiseInPython(std::exception_ptr e) {
  py::object obj;
  try {
    std::rethrow_exception(e);
  } catch (const PythonInterrupt& i) {
    raiseAgain(i);
  } catch (const Error& error) {
    obj = errorObject(error);
  } catch (const std::exception& other) {
    py::module_ errors = py::module_::import("loom.errors");
    obj = errors.attr("InternalError")(std::string("internal error: ") + other.what());
    obj.attr("code") = "internal";
  } catch (...) {  // the core's control flow: a park, a cancel, an unusable checkpoint
    obj = py::module_::import("loom.errors").attr("Suspended")(
        "the run stops here (it parks or ends); let this exception propagate");
  }
  obj.attr(kNativeAttr) = holding(e);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())), obj.ptr());
  throw py::error_already_set();
}

void rethrowFromPython(py::error_already_set& e, std::string_view where) {
  py::object value = e.value();
  if (py::hasattr(value, kNativeAttr)) {
    py::object capsule = value.attr(kNativeAttr);
    auto* held = static_cast<std::exception_ptr*>(
        PyCapsule_GetPointer(capsule.ptr(), "loom.native_exception"));
    if (held != nullptr) {
      std::exception_ptr native = *held;
      std::rethrow_exception(native);
    }
    PyErr_Clear();
  }
  if (!PyObject_IsInstance(value.ptr(), PyExc_Exception)) throw PythonInterrupt{keep(value)};
  std::string type = py::str(py::type::handle_of(value).attr("__name__"));
  std::string message = py::str(value);
  py::object errorClass = py::module_::import("loom.errors").attr("Error");
  if (py::isinstance(value, errorClass) && py::hasattr(value, "code")) {
    ErrorCode code = errorCodeFromName(std::string(py::str(value.attr("code"))));
    rethrowWithContext(Error(code, message), std::string(where) + " raised " + type);
  }
  throw InternalError(std::string(where) + " raised " + type + ": " + message);
}

}  // namespace loom::python
