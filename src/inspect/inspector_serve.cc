// Serving the inspector (docs/spec/http-api.md): every request's access is checked before
// routing (token, Host, CSRF, read-only), then the route table answers it; SIGINT or SIGTERM
// stops the server.
#include <httplib.h>
#include <signal.h>
#include <sodium.h>

#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "inspect/front_door.h"
#include "inspect/http_errors.h"
#include "inspect/inspector_server.h"
#include "util/sigpipe_block.h"

namespace loom::inspect {
namespace {

constexpr std::size_t kMaxRequestBytes = 64 * 1024;
constexpr std::size_t kServerThreads = 16;

void refuse(httplib::Response& res, std::string_view code, const std::string& message) {
  res.status = httpStatusOf(code);
  res.set_content(json::toText(json::object{
                      {"error", json::object{{"code", code}, {"message", message}}}}),
                  "application/json; charset=utf-8");
}

// The host of a Host header, which must be exactly host[:port] (RFC 9110 7.2): a name of
// letters, digits, '-' and '.', an IPv4 address, or an IPv6 address in brackets, then at most
// a decimal port. Anything else ('127.0.0.1:80@evil.example', a path, userinfo, spaces) is
// nullopt, never a prefix of it.
std::optional<std::string> hostName(std::string_view host) {
  std::string_view name = host, port;
  if (host.starts_with('[')) {
    std::size_t close = host.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    name = host.substr(1, close - 1);
    std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return std::nullopt;
    if (!rest.empty()) port = rest.substr(1);
    if (name.empty() || name.find_first_not_of("0123456789abcdefABCDEF:.") != std::string_view::npos) {
      return std::nullopt;
    }
  } else {
    std::size_t colon = host.find(':');
    if (colon != std::string_view::npos) {
      name = host.substr(0, colon);
      port = host.substr(colon + 1);
      if (port.empty()) return std::nullopt;
    }
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                               "0123456789-.") != std::string_view::npos) {
      return std::nullopt;
    }
  }
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::string(name);
}

// The host[:port] of an Origin header ("https://h:1" -> "h:1"); empty when it has none.
std::string originHost(const std::string& origin) {
  auto scheme = origin.find("://");
  return scheme == std::string::npos ? std::string() : origin.substr(scheme + 3);
}

bool equalTokens(const std::string& given, const std::string& token) {
  return given.size() == token.size() &&
         sodium_memcmp(given.data(), token.data(), token.size()) == 0;
}

// The checks of docs/spec/http-api.md "Access", before any route runs.
httplib::Server::HandlerResponse checkAccess(const ServeOptions& options,
                                             const httplib::Request& req,
                                             httplib::Response& res) {
  using Handled = httplib::Server::HandlerResponse;
  bool api = req.path.rfind("/api/", 0) == 0;
  if (!options.token.empty() && api) {
    std::string given = req.get_header_value("Authorization");
    if (given.rfind("Bearer ", 0) != 0 || !equalTokens(given.substr(7), options.token)) {
      refuse(res, "unauthenticated",
             "this server needs its token: send `Authorization: Bearer <token>` (open the page "
             "as http://HOST:PORT/#token=<token>)");
      return Handled::Handled;
    }
  }
  if (options.token.empty()) {
    std::string host = req.get_header_value("Host");
    std::optional<std::string> name = hostName(host);
    if (!name || !isLoopback(*name) || req.get_header_value_count("Host") != 1) {
      refuse(res, "forbidden",
             "Host '" + host + "' is not this loopback server's address; open it as "
             "http://127.0.0.1:" + std::to_string(options.port) + "/");
      return Handled::Handled;
    }
  }
  if (req.method != "POST") return Handled::Unhandled;
  if (options.readOnly) {
    refuse(res, "readOnly", "this server runs with --read-only: it changes nothing");
    return Handled::Handled;
  }
  std::string origin = req.get_header_value("Origin");
  if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0 ||
      req.get_header_value("X-Loom-Request") != "1" ||
      (!origin.empty() && originHost(origin) != req.get_header_value("Host"))) {
    refuse(res, "forbidden",
           "a request that changes something needs `Content-Type: application/json` and "
           "`X-Loom-Request: 1`, and no Origin but this server's own");
    return Handled::Handled;
  }
  return Handled::Unhandled;
}

// Stops `server` on SIGINT or SIGTERM (both blocked in every thread and taken here), until
// destroyed: then it wakes its thread (a SIGTERM to it alone) and joins it, so the thread never
// outlives the server it would stop.
class StopOnSignal {
 public:
  StopOnSignal(FrontDoorServer& server, sigset_t signals)
      : thread_([&server, signals] {
          int sig = 0;
          sigwait(&signals, &sig);
          server.stopServing();
        }) {}
  ~StopOnSignal() {
    pthread_kill(thread_.native_handle(), SIGTERM);  // no-op once it took a signal and ended
    thread_.join();
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  std::thread thread_;
};

}  // namespace

bool isLoopback(std::string_view host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost";
}

int serveInspector(host::HomeSession& session, ServeOptions& options) {
  session.store(false);  // refuses a folder that is not a home before listening
// Without the master key the server still shows what is not sealed; a sealed run's page
// says what the server needs (a sealed content store still needs the key to boot at all).
session.setKeysOptional();
sigset_t signals;
sigemptyset(&signals);
sigaddset(&signals, SIGINT);
sigaddset(&signals, SIGTERM);
pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // the server's threads inherit the mask
SigpipeBlock noSigpipe;
// One request per connection (the front door routes one): a request refused before its
// body is read must not leave that body to be parsed as the next request (a smuggled POST
// past the CSRF checks).
FrontDoorServer server;
server.set_payload_max_length(kMaxRequestBytes);  // larger bodies: 413
InspectorRoutes routes(session, options);
routes.install(server);
server.set_pre_routing_handler(
  [&options, &routes](const httplib::Request& req, httplib::Response& res) {
    routes.recoverAfterFailedFlush();
    return checkAccess(options, req, res);
  });
int port = options.port;
if (port == 0) {
  port = server.bind_to_any_port(options.bind);
} else if (!server.bind_to_port(options.bind, port)) {
  port = -1;
}
if (port < 0) {
  throw UnavailableError("cannot listen on " + options.bind + ":" +
             std::to_string(options.port) +
             " (in use, or not an address of this machine); pick another --port");
}
options.port = port;
StopOnSignal stopper(server, signals);
session.out() << "loom serve: http://" << options.bind << ":" << port << "/ over "
        << session.location().describe() << (options.readOnly ? " (read-only)" : "")
        << std::endl;
server.serve(FrontDoorLimits{.threads = kServerThreads, .maxBodyBytes = kMaxRequestBytes});
  return cli::kExitOk;
}

}  // namespace loom::inspect
