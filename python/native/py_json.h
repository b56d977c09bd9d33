// JSON <-> Python values at the binding's edge. Only what JSON holds crosses: None, bool, int,
// float (finite), str, list/tuple and dict with str keys. Anything else a tool, a model, a step
// or a config hands in is refused with an InvalidArgumentError naming who handed it in, where
// in the value ($.items[2].when) and its Python type; nothing is guessed or stringified.
// Call with the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>

#include "loom/json/json.h"

namespace loom::python {

namespace py = pybind11;

// `what` names the value's source in the error ("the output of step 'fetch'").
json::value toJson(py::handle value, std::string_view what);
py::object toPython(const json::value& value);

}  // namespace loom::python
