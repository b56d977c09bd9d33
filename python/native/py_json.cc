#include "py_json.h"

#include <cmath>
#include <optional>
#include <string>

#include "loom/util/error.h"

namespace loom::python {
namespace {


[[noreturn]] void refuse(std::string_view what, const std::string& at, const std::string& why) {
  throw InvalidArgumentError(std::string(what) + " is not JSON: " + why + " at " + at +
                             "; return only None, bool, int, float, str, list and dict with "
                             "str keys");
}

std::string typeName(py::handle v) { return py::str(py::type::handle_of(v).attr("__name__")); }

// UTF-8 of a str; nullopt for one that is not valid Unicode (a lone surrogate).
std::optional<std::string_view> utf8(py::handle s) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(s.ptr(), &size);
  if (text == nullptr) {
    PyErr_Clear();
    return std::nullopt;
  }
  return std::string_view(text, static_cast<std::size_t>(size));
}

void enter(std::string_view what, const std::string& at, std::size_t depth) {
  if (depth >= json::kMaxValueDepth) {
    refuse(what, at, "lists and dicts nested deeper than " +
                         std::to_string(json::kMaxValueDepth) +
                         " levels, the most a journaled value may (a cycle?)");
  }
}

json::value convert(py::handle v, std::string_view what, const std::string& at,
                    std::size_t depth) {
  if (v.is_none()) return nullptr;
  if (PyBool_Check(v.ptr())) return v.ptr() == Py_True;
  if (PyLong_Check(v.ptr())) {
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow == 0) return static_cast<int64_t>(n);
    unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      refuse(what, at, "the integer " + std::string(py::str(v)) + " is out of range");
    }
    return static_cast<uint64_t>(u);
  }
  if (PyFloat_Check(v.ptr())) {
    double d = PyFloat_AsDouble(v.ptr());
    if (!std::isfinite(d)) refuse(what, at, "the float " + std::string(py::str(v)));
    return d;
  }
  if (PyUnicode_Check(v.ptr())) {
    auto text = utf8(v);
    if (!text) refuse(what, at, "a str that is not valid Unicode (a lone surrogate)");
    return json::value(*text);
  }
  if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
    enter(what, at, depth);
    json::array out;
    py::sequence items = py::reinterpret_borrow<py::sequence>(v);
    out.reserve(items.size());
    std::size_t i = 0;
    for (py::handle item : items) {
      out.push_back(convert(item, what, at + "[" + std::to_string(i++) + "]", depth + 1));
    }
    return out;
  }
  if (PyDict_Check(v.ptr())) {
    enter(what, at, depth);
    json::object out;
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(v)) {
      if (!PyUnicode_Check(key.ptr())) {
        refuse(what, at, "a dict key of type " + typeName(key) + " (" +
                             std::string(py::repr(key)) + ")");
      }
      auto k = utf8(key);
      if (!k) refuse(what, at, "a dict key that is not valid Unicode (a lone surrogate)");
      out[*k] = convert(item, what, at + "." + std::string(*k), depth + 1);
    }
    return out;
  }
  refuse(what, at, "a value of type " + typeName(v));
}

}  // namespace

json::value toJson(py::handle value, std::string_view what) {
  return convert(value, what, "$", 0);
}

py::object toPython(const json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return py::none();
    case boost::json::kind::bool_:
      return py::bool_(v.get_bool());
    case boost::json::kind::int64:
      return py::int_(v.get_int64());
    case boost::json::kind::uint64:
      return py::int_(v.get_uint64());
    case boost::json::kind::double_:
      return py::float_(v.get_double());
    case boost::json::kind::string: {
      const auto& s = v.get_string();
      return py::str(s.data(), s.size());
    }
    case boost::json::kind::array: {
      const auto& a = v.get_array();
      py::list out(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) out[i] = toPython(a[i]);
      return out;
    }
    case boost::json::kind::object: {
      py::dict out;
      for (const auto& [key, item] : v.get_object()) {
        out[py::str(key.data(), key.size())] = toPython(item);
      }
      return out;
    }
  }
  return py::none();
}

}  // namespace loom::python
