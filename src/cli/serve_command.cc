// `loom serve`: parses its options (the token, the bind address) and refuses an exposed bind
// without a token; the inspector itself (access checks, the route table, the page) is
// src/inspect (inspector_server.h).
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "command.h"
#include "inspect/inspector_server.h"

namespace loom::cli {
namespace {

constexpr std::size_t kMinTokenChars = 32;

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

}  // namespace

Action setupServe(CLI::App& command, HomeSession& session) {
  struct Args {
    inspect::ServeOptions options;
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
    inspect::ServeOptions& options = args->options;
    options.token = readToken(args->tokenFile);
    if (!inspect::isLoopback(options.bind) && options.token.empty()) {
      throw UsageError("--bind " + options.bind +
                       " exposes the runs beyond this machine and needs a token: give one with "
                       "--token-file FILE or LOOM_SERVE_TOKEN, or bind 127.0.0.1");
    }
    return inspect::serveInspector(session, options);
  };
}

}  // namespace loom::cli
