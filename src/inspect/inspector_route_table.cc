#include "inspect/inspector_route_table.h"

#include "loom/util/error.h"

namespace loom::inspect {
namespace {

constexpr RouteRow kRoutes[] = {
    {"GET", "/", "/", "the inspector's page"},
    {"GET", "/api/v1/server", "/api/v1/server", "the server's version, mode and store"},
    {"GET", "/api/v1/executions", "/api/v1/executions", "a page of executions, as `loom ls`"},
    {"GET", R"(/api/v1/executions/(.+)/events)", "/api/v1/executions/{id}/events",
     "a page of an execution's events, as `loom log`"},
    {"GET", R"(/api/v1/executions/(.+)/state)", "/api/v1/executions/{id}/state",
     "the folded state, as `loom state`"},
    {"GET", R"(/api/v1/executions/(.+)/timeline)", "/api/v1/executions/{id}/timeline",
     "a page of the run turn by turn"},
    {"GET", R"(/api/v1/executions/(.+)/sizes)", "/api/v1/executions/{id}/sizes",
     "the log's and state's size over the run"},
    {"GET", R"(/api/v1/executions/(.+)/blobs/([^/]+))", "/api/v1/executions/{id}/blobs/{address}",
     "a blob the run's log cites"},
    {"GET", R"(/api/v1/executions/(.+))", "/api/v1/executions/{id}",
     "one execution, its pending approvals and token usage"},
    {"GET", "/api/v1/approvals", "/api/v1/approvals", "every run waiting for an approval"},
    {"GET", "/api/v1/killed", "/api/v1/killed", "the kill switch's stops, as `loom killed`"},
    {"GET", "/api/v1/content", "/api/v1/content", "the content store's blob count and bytes"},
    {"POST", R"(/api/v1/executions/(.+)/approvals/([^/]+))",
     "/api/v1/executions/{id}/approvals/{stepId}", "approve or deny a tool call (`loom signal`)"},
    {"POST", R"(/api/v1/executions/(.+)/signals/([^/]+))", "/api/v1/executions/{id}/signals/{name}",
     "send a signal (`loom signal`)"},
    {"POST", R"(/api/v1/executions/(.+)/cancel)", "/api/v1/executions/{id}/cancel",
     "cancel a run (`loom cancel`)"},
    {"POST", R"(/api/v1/executions/(.+)/retry)", "/api/v1/executions/{id}/retry",
     "run a retrying step now (`loom retry`)"},
    {"POST", R"(/api/v1/executions/(.+)/fork)", "/api/v1/executions/{id}/fork",
     "a new run from this one's log up to a step (`loom fork`)"},
    {"POST", R"(/api/v1/executions/(.+)/rerun)", "/api/v1/executions/{id}/rerun",
     "run a failed run again from its failed step (`loom rerun`)"},
    {"POST", "/api/v1/kill", "/api/v1/kill", "stop an effect (`loom kill`)"},
    {"POST", "/api/v1/unkill", "/api/v1/unkill", "lift a stop (`loom unkill`)"},
    {"POST", "/api/v1/sweep/dry-run", "/api/v1/sweep/dry-run",
     "what a sweep would delete (`loom sweep --dry-run`)"},
};

std::span<const RouteRow> rows() { return kRoutes; }

std::string key(std::string_view method, std::string_view pattern) {
  return std::string(method) + " " + std::string(pattern);
}

}  // namespace

std::span<const RouteRow> inspectorRoutes() { return rows(); }

std::string routesMarkdown() {
  std::string out = "| method | route | what |\n|---|---|---|\n";
  for (const RouteRow& r : rows()) {
    out += "| `" + std::string(r.method) + "` | `" + std::string(r.path) + "` | " +
           std::string(r.summary) + " |\n";
  }
  return out;
}

void RouteInstaller::add(std::string_view method, std::string_view pattern) {
  for (const RouteRow& r : rows()) {
    if (r.method == method && r.pattern == pattern) {
      if (!installed_.insert(key(method, pattern)).second) {
        throw InternalError("the inspector installs " + key(method, pattern) + " twice");
      }
      return;
    }
  }
  throw InternalError("the inspector's route " + key(method, pattern) +
                      " has no row in its route table (inspector_route_table.cc)");
}

void RouteInstaller::get(std::string_view pattern, httplib::Server::Handler handler) {
  add("GET", pattern);
  server_.Get(std::string(pattern), std::move(handler));
}

void RouteInstaller::post(std::string_view pattern, httplib::Server::Handler handler) {
  add("POST", pattern);
  server_.Post(std::string(pattern), std::move(handler));
}

void RouteInstaller::finish() const {
  std::string missing;
  for (const RouteRow& r : rows()) {
    if (!installed_.contains(key(r.method, r.pattern))) {
      missing += (missing.empty() ? "" : ", ") + key(r.method, r.pattern);
    }
  }
  if (!missing.empty()) {
    throw InternalError("the inspector's route table lists routes it does not install: " +
                        missing);
  }
}

}  // namespace loom::inspect
