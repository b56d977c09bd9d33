// The inspector (`loom serve`): its HTTP API and page (docs/spec/http-api.md) over a
// host::HomeSession's stores. inspector_serve.cc checks each request's access (loopback,
// token, Host, CSRF, read-only) and runs the server; inspector_routes.cc answers the routes of
// its route table (inspector_route_table.h). Reads run in the server's process, one at a time
// (a HomeSession is not thread-safe); operations run the `loom` subcommand an operator would
// type, as a child process. src/cli/serve_command.cc parses the command line.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "host/home_session.h"
#include "inspect/inspector_route_table.h"
#include "loom/cli/cli.h"
#include "inspect/timeline.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace loom::inspect {

struct ServeOptions {
  std::string bind = "127.0.0.1";
  int port = 7420;
  bool readOnly = false;
  std::string token;  // empty: no token (loopback only)
};

// The answer of an operation child: its exit status and output, or still running.
struct OperationResult {
  bool finished = false;
  int exitCode = 0;
  int pid = 0;
  std::string out;        // stdout (the subcommand's --json output)
  std::string err;        // stderr without the error-code line
  std::string errorCode;  // the loom error code the child reported, if any
};

class InspectorRoutes {
 public:
  InspectorRoutes(host::HomeSession& session, ServeOptions options);
  // Adds every route to `server`.
  void install(httplib::Server& server);
  // Before each request: after a failed flush (a disk error) this process writes nothing more
  // to the file until every connection to it closes, so the server closes its stores and the
  // request reopens them, as a restarted server would. A disk still failing fails again.
  void recoverAfterFailedFlush();

 private:
  void readBlob(const httplib::Request& req, httplib::Response& res);
  void installOperations(RouteInstaller& routes);
  // Runs `loom <args>` as a child with the server's home, database and config; waits up to 2 s.
  OperationResult runOperation(const std::vector<std::string>& args) const;

  host::HomeSession& session_;
  ServeOptions options_;
  std::string program_;                 // this binary
  std::vector<std::string> globalArgs_;  // --home, --durability
  std::vector<std::string> childEnv_;    // the database location, the error-code line
  // --config FILE of the server, for the operations that read the home as it does (kill,
  // unkill, the sweep); a run's own operations boot with the config that run recorded.
  std::vector<std::string> configArgs_;
  std::mutex mu_;                        // one read at a time over session_
  std::map<std::string, UsageTally> usage_;  // per execution, GUARDED_BY(mu_)
  // The last size series per execution, kept while its log has not grown: a watched run's
  // chart reads the log once, not once per watcher. GUARDED_BY(mu_)
  struct SizeSeries {
    int64_t startedAtMillis = 0;
    int64_t nextSeq = 0;
    std::size_t points = 0;
    json::array series;
  };
  std::map<std::string, SizeSeries> sizes_;
};

// True for 127.0.0.1, ::1 and localhost.
bool isLoopback(std::string_view host);

// Serves the inspector over `session`'s home with `options` (its port set to the one bound)
// until SIGINT or SIGTERM; returns the exit code. Throws UnavailableError when it cannot
// listen, and what opening the home throws (a folder that is not a home).
int serveInspector(host::HomeSession& session, ServeOptions& options);

// Set in a child's environment: after its "loom: <message>" line the child writes
// "loom-error-code: <code>" (errorCodeName), so `loom serve` answers with the right status.
inline constexpr const char* kErrorCodeLineEnv = "LOOM_ERROR_CODE_LINE";
inline constexpr std::string_view kErrorCodePrefix = "loom-error-code: ";

}  // namespace loom::inspect
