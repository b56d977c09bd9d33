// loom.define_config's native side: the grouped config, given as a dict (or a loom.toml file),
// is checked by the same option table and messages as loom.toml and a C++ Config
// (app::parseConfigJson). Python callables, which no dict of JSON can hold, are set after the
// parse at the places the record gives them: execution.claimCheck.digests[toolId],
// execution.claimCheck.onOffload, observability.onWarn, and Python entries of
// execution.effectMiddleware (kept at their places among the ready-made ones); then the whole
// config is validated again, as defineConfig does.
#include <pybind11/stl.h>

#include <cstdio>
#include <string>

#include "loom/app/config_file.h"
#include "loom/middleware/claim_check/claim_check.h"
#include "loom/middleware/claim_check/claim_check_options.h"
#include "loom/util/error.h"
#include "py_app.h"
#include "py_callbacks.h"
#include "py_errors.h"
#include "py_json.h"

namespace loom::python {
namespace {

struct Callables {
  py::dict digests;                          // toolId -> fn(result, text)
  py::object onOffload = py::none();         // fn(info)
  py::object onWarn = py::none();            // fn(message)
  std::vector<std::pair<std::size_t, py::object>> middleware;  // (index, object)
  std::size_t middlewareCount = 0;           // entries in all, ready-made and Python
};

middleware::DigestFn digestOf(const std::string& toolId, py::object fn) {
  SharedPy ref = keep(std::move(fn));
  std::string where = "the digest of tool '" + toolId + "'";
  return [ref, where](const json::value& result, std::string_view text) {
    return withGil(where, [&] {
      py::object out = settled(ref->get()(toPython(result), py::str(text.data(), text.size())));
      return toJson(out, where);
    });
  };
}

std::function<void(const middleware::OffloadInfo&)> onOffloadOf(py::object fn) {
  SharedPy ref = keep(std::move(fn));
  return [ref](const middleware::OffloadInfo& info) {
    withGil("execution.claimCheck.onOffload", [&] {
      py::dict d;
      d["execution_id"] = info.context.executionId;
      d["step_id"] = info.context.stepId;
      d["effect_id"] = info.context.effectId;
      d["address"] = info.address;
      d["size"] = info.size;
      d["envelope"] = toPython(info.envelope);
      settled(ref->get()(d));
    });
  };
}

std::function<void(std::string_view)> onWarnOf(py::object fn) {
  SharedPy ref = keep(std::move(fn));
  return [ref](std::string_view message) {
    try {
      withGil("observability.onWarn",
              [&] { settled(ref->get()(py::str(message.data(), message.size()))); });
    } catch (const std::exception& e) {  // a warning sink that fails must fail nothing
      std::fprintf(stderr, "loom: warning: %.*s (observability.onWarn raised: %s)\n",
                   static_cast<int>(message.size()), message.data(), e.what());
    }
  };
}

std::shared_ptr<const app::Config> withCallables(std::shared_ptr<const app::Config> parsed,
                                                 const Callables& c) {
  bool any = !c.digests.empty() || !c.onOffload.is_none() || !c.onWarn.is_none() ||
             !c.middleware.empty();
  if (!any) return parsed;
  app::Config config = *parsed;
  if (!c.digests.empty() || !c.onOffload.is_none()) {
    if (!config.execution.claimCheck) {
      throw app::ConfigValidationError(
          "define_config", {{"execution.claimCheck", "digests and onOffload need "
                                                     "execution.claimCheck.toolIds; set it"}});
    }
    for (auto [key, fn] : c.digests) {
      std::string tool = py::str(key);
      config.execution.claimCheck->digests[tool] =
          digestOf(tool, py::reinterpret_borrow<py::object>(fn));
    }
    if (!c.onOffload.is_none()) config.execution.claimCheck->onOffload = onOffloadOf(c.onOffload);
  }
  if (!c.onWarn.is_none()) config.observability.onWarn = onWarnOf(c.onWarn);
  if (!c.middleware.empty()) {
    std::vector<std::shared_ptr<effects::Middleware>> built = config.execution.effectMiddleware;
    std::vector<std::shared_ptr<effects::Middleware>> all;
    std::size_t next = 0, py = 0;
    for (std::size_t i = 0; i < c.middlewareCount; ++i) {
      if (py < c.middleware.size() && c.middleware[py].first == i) {
        all.push_back(pythonMiddleware(c.middleware[py++].second));
      } else if (next < built.size()) {
        all.push_back(built[next++]);
      }
    }
    config.execution.effectMiddleware = std::move(all);
  }
  return app::defineConfig(std::move(config));
}

// The parse saw only the dict entries of execution.effectMiddleware: a problem at its k-th
// entry is named at that entry's place in the list the user wrote.
std::shared_ptr<const app::Config> parseGroups(const json::value& groups, const std::string& origin,
                                               const Callables& c) {
  try {
    return app::parseConfigJson(groups, origin);
  } catch (const app::ConfigValidationError& e) {
    if (c.middleware.empty()) throw;
    std::vector<std::size_t> places;  // of the dict entries, in order
    for (std::size_t i = 0, py = 0; i < c.middlewareCount; ++i) {
      if (py < c.middleware.size() && c.middleware[py].first == i) ++py;
      else places.push_back(i);
    }
    const std::string prefix = "execution.effectMiddleware[";
    app::ConfigIssues issues = e.issues();
    for (auto& issue : issues) {
      if (!issue.path.starts_with(prefix)) continue;
      std::size_t close = issue.path.find(']', prefix.size());
      std::size_t k = std::stoul(issue.path.substr(prefix.size(), close - prefix.size()));
      if (k < places.size()) {
        issue.path = prefix + std::to_string(places[k]) + issue.path.substr(close);
      }
    }
    throw app::ConfigValidationError(e.origin(), std::move(issues));
  }
}

Callables callablesOf(py::dict digests, py::object onOffload, py::object onWarn,
                      std::vector<std::pair<std::size_t, py::object>> middleware,
                      std::size_t middlewareCount) {
  return Callables{std::move(digests), std::move(onOffload), std::move(onWarn),
                   std::move(middleware), middlewareCount};
}

}  // namespace

void bindConfig(py::module_& m) {
  py::class_<app::Config, std::shared_ptr<app::Config>>(m, "Config")
      .def("describe", [](const app::Config& c) { return app::describeConfig(c); },
           "Every option as `path = value`, defaults filled in, then the middleware chain.")
      .def_property_readonly("home", [](const app::Config& c) { return c.storage.home; });
  m.def(
      "define_config",
      [](py::handle groups, std::string origin, py::dict digests, py::object onOffload,
         py::object onWarn, std::vector<std::pair<std::size_t, py::object>> middleware,
         std::size_t middlewareCount) {
        return guarded([&] {
          json::value json = toJson(groups, "the config");
          Callables c = callablesOf(digests, onOffload, onWarn, middleware, middlewareCount);
          auto config = withCallables(parseGroups(json, origin, c), c);
          return std::const_pointer_cast<app::Config>(config);
        });
      });
  m.def("preview_digest", [](int64_t maxChars, py::handle result, std::string text) {
    return guarded([&] {
      return toPython(middleware::previewDigest(maxChars)(toJson(result, "the result"), text));
    });
  });
  m.def("json_text", [](py::handle value, std::string what) {
    return guarded([&] { return json::toText(toJson(value, what)); });
  });
  m.def("load_config", [](std::string path) {
    return guarded([&] { return std::const_pointer_cast<app::Config>(app::loadConfigFile(path)); });
  });
}

}  // namespace loom::python
