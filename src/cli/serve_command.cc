// `loom serve`: parses its options, refuses an exposed bind without a token, checks every
// request's access before routing (token, Host, CSRF, read-only) and serves until SIGINT or
// SIGTERM.
#include <httplib.h>
#include <signal.h>
#include <sodium.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "serve.h"
#include "serve_errors.h"
#include "serve_front_door.h"
#include "util/sigpipe_block.h"

namespace loom::cli {
namespace {

constexpr std::size_t kMinTokenChars = 32;
constexpr std::size_t kMaxRequestBytes = 64 * 1024;
constexpr std::size_t kServerThreads = 16;

bool isLoopback(std::string_view host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost";
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  return text;
}

std::string readToken(const std::string& file) {
  std::string token;
  std::string source;
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) throw UsageError("--token-file: cannot read '" + file + "'");
    std::getline(in, token);
    source = "--token-file " + file;
  } else if (const char* env = std::getenv("LOOM_SERVE_TOKEN")) {
    token = env;
    source = "LOOM_SERVE_TOKEN";
  }
  token = trimmed(std::move(token));
  if (!source.empty() && token.empty()) {
    // A token was asked for: serving without one would fail open.
    throw UsageError(source + " holds no token; write one (e.g. `openssl rand -hex 32`)");
  }
  if (!token.empty() && token.size() < kMinTokenChars) {
    throw UsageError("the token is " + std::to_string(token.size()) + " characters; use at least " +
                     std::to_string(kMinTokenChars) + " (e.g. `openssl rand -hex 32`)");
  }
  return token;
}

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

// Stops `server` on SIGINT or SIGTERM: both are blocked in every thread and taken here.
void stopOnSignal(FrontDoorServer& server, sigset_t signals) {
  std::thread([&server, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stopServing();
  }).detach();
}

}  // namespace

Action setupServe(CLI::App& command, HomeSession& session) {
  struct Args {
    ServeOptions options;
    std::string tokenFile;
  };
  auto args = std::make_shared<Args>();
  command.add_option("--bind", args->options.bind,
                     "The address to listen on (default 127.0.0.1; any other needs a token)")
      ->type_name("ADDR");
  command.add_option("--port", args->options.port, "The port (default 7420; 0 picks a free one)")
      ->check(CLI::Range(0, 65535))
      ->type_name("PORT");
  command.add_flag("--read-only", args->options.readOnly,
                   "Serve no route that changes anything (approve, signal, cancel, retry, kill)");
  command.add_option("--token-file", args->tokenFile,
                     "A file whose first line is the token every request must carry (at least 32 "
                     "characters; LOOM_SERVE_TOKEN otherwise)")
      ->type_name("FILE");
  command
      .add_option_function<std::string>(
          "--config", [&session](const std::string& file) { session.loadConfig(file); },
          "A loom.toml with security.keys (sealed runs shown decrypted) or storage.url")
      ->type_name("FILE");
  command.footer(
      "Open http://127.0.0.1:7420/ in a browser: the runs, each run turn by turn (tool calls,\n"
      "offloaded results, untrusted content fenced, approvals), the approvals inbox. The JSON\n"
      "API is docs/spec/http-api.md. Binding another address than loopback needs a token\n"
      "(--token-file or LOOM_SERVE_TOKEN); open the page then as http://HOST:PORT/#token=T.\n"
      "Approve, signal, cancel, retry and kill run the `loom` command of that name as a child\n"
      "process, with this server's home. SIGINT or SIGTERM stops the server.");
  return [&session, args] {
    ServeOptions& options = args->options;
    options.token = readToken(args->tokenFile);
    if (!isLoopback(options.bind) && options.token.empty()) {
      throw UsageError("--bind " + options.bind +
                       " exposes the runs beyond this machine and needs a token: give one with "
                       "--token-file FILE or LOOM_SERVE_TOKEN, or bind 127.0.0.1");
    }
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
    stopOnSignal(server, signals);
    session.out() << "loom serve: http://" << options.bind << ":" << port << "/ over "
                  << session.location().describe() << (options.readOnly ? " (read-only)" : "")
                  << std::endl;
    server.serve(FrontDoorLimits{.threads = kServerThreads, .maxBodyBytes = kMaxRequestBytes});
    return kExitOk;
  };
}

}  // namespace loom::cli
