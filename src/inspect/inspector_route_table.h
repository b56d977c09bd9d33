// The inspector's route table: every route `loom serve` answers, with the path and the one
// line docs/spec/http-api.md lists for it ("Routes", generated from this table by
// routesMarkdown, checked by a test). InspectorRoutes::install registers each handler through
// a RouteInstaller, which refuses a route with no row and a row with no route, so the list
// and the routes cannot drift. Values; thread-safe.
#pragma once

#include <httplib.h>

#include <set>
#include <span>
#include <string>
#include <string_view>

namespace loom::inspect {

struct RouteRow {
  std::string_view method;   // "GET" or "POST"
  std::string_view pattern;  // the server's pattern (a regex where the path has parameters)
  std::string_view path;     // as documented: {id}, {stepId}, {name}, {address}
  std::string_view summary;  // one line
};

// Every route, in the order docs/spec/http-api.md lists them.
std::span<const RouteRow> inspectorRoutes();

// The "Routes" list of docs/spec/http-api.md: one table row per route.
std::string routesMarkdown();

class RouteInstaller {
 public:
  explicit RouteInstaller(httplib::Server& server) : server_(server) {}
  // Registers `handler` for the row of (method, pattern); InternalError when there is none.
  void get(std::string_view pattern, httplib::Server::Handler handler);
  void post(std::string_view pattern, httplib::Server::Handler handler);
  // InternalError naming every row that got no handler.
  void finish() const;

 private:
  void add(std::string_view method, std::string_view pattern);
  httplib::Server& server_;
  std::set<std::string> installed_;  // "METHOD pattern"
};

}  // namespace loom::inspect
