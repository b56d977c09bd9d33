#include "py_app.h"

#include <pybind11/stl.h>

#include <optional>
#include <sstream>

#include "host/home_session.h"
#include "loom/app/app.h"
#include "loom/cli/cli.h"
#include "loom/middleware/claim_check/claim_check.h"
#include "loom/util/error.h"
#include "py_errors.h"
#include "py_json.h"

namespace loom::python {

void NativeApp::beforeRegistering(std::string_view what) const {
  if (started_) {
    throw FailedPreconditionError(
        "cannot register " + std::string(what) +
        " after the app ran something: register every workflow, tool, model and agent "
        "before the first run, worker or operation");
  }
}

bool NativeApp::hasModel(const std::shared_ptr<agent::Model>& model) const {
  auto it = models_.find(model->id());
  return it != models_.end() && it->second == model;
}

std::pair<int, std::string> NativeApp::invoke(std::vector<std::string> args) {
  started_ = true;
  if (!home_.empty()) args.insert(args.begin(), {"--home", home_});
  std::ostringstream out;
  int code = cli::invoke(std::move(args), workflows_, tasks_, config_, out);
  return {code, out.str()};
}

int NativeApp::main(std::vector<std::string> argv) {
  started_ = true;
  bool homeGiven = std::getenv("LOOM_HOME") != nullptr;
  for (const auto& a : argv) homeGiven = homeGiven || a == "--home" || a.starts_with("--home=");
  if (!home_.empty() && !homeGiven) argv.insert(argv.begin() + 1, {"--home", home_});
  std::vector<char*> line;
  for (auto& a : argv) line.push_back(a.data());
  return cli::main(static_cast<int>(line.size()), line.data(), workflows_, tasks_, config_);
}

void NativeApp::applyHome(host::HomeOptions& options) const {
  host::readDatabaseEnvironment(options);
  if (!home_.empty()) {
    options.home = home_;
    options.homeGiven = true;
  }
}

namespace {

// The original behind a claim-check envelope, from the app's content store (nullopt once
// reclaimed or erased). Without the GIL.
std::optional<json::value> resolveEnvelope(NativeApp& a, const json::value& envelope,
                                           const std::optional<std::string>& subject) {
  a.markStarted();
  std::ostringstream out;
  host::HomeSession session(a.workflows(), a.tasks(), out, a.config());
  a.applyHome(session.options());
  return middleware::resolveClaimCheck(*session.app(false).contentStore(), envelope, subject);
}

}  // namespace

void bindApp(py::module_& m) {
  py::class_<NativeApp, std::shared_ptr<NativeApp>>(m, "App")
      .def(py::init([](std::shared_ptr<app::Config> config, std::string home) {
             return std::make_shared<NativeApp>(std::move(config), std::move(home));
           }),
           py::arg("config"), py::arg("home") = "")
      .def("workflow_names",
           [](NativeApp& a) {
             std::vector<std::string> names;
             for (const auto* w : a.workflows().all()) names.push_back(w->name);
             return names;
           })
      .def("task_ids", [](NativeApp& a) { return a.tasks().ids(); })
      .def("invoke",
           [](NativeApp& a, std::vector<std::string> args) {
             return guarded([&] {
               py::gil_scoped_release release;
               return a.invoke(std::move(args));
             });
           })
      .def("resolve_claim_check",
           [](NativeApp& a, py::handle envelope, std::optional<std::string> subject) -> py::object {
             json::value e = guarded([&] { return toJson(envelope, "the envelope"); });
             std::optional<json::value> value = guarded([&] {
               py::gil_scoped_release release;
               return resolveEnvelope(a, e, subject);
             });
             return value ? toPython(*value) : py::none();
           })
      .def("main", [](NativeApp& a, std::vector<std::string> argv) {
        py::gil_scoped_release release;
        return a.main(std::move(argv));
      });
}

}  // namespace loom::python
