// MCP servers over stdio (`[[tools.mcp]]`): McpClient starts a Model Context Protocol server
// process, runs the handshake (initialize, notifications/initialized), lists its tools
// (tools/list, following nextCursor) and calls them (tools/call) over newline-delimited
// JSON-RPC 2.0 on the process's stdin/stdout. Each listed tool becomes an McpTool, a Loom
// `tool` task under the MCP tool's own name. MCP results are untrusted: every McpTool result
// is recorded as tainted(result, "mcp:<server name>") (ADR 0085), so the agent loop fences it.
//
// Failures are typed and bounded by timeoutMillis (each request: initialize, each tools/list
// page, each tools/call): the server exits or is killed -> UnavailableError; it writes a line
// that is not JSON-RPC -> DataLossError (the process is killed); it does not answer in time ->
// DeadlineExceededError (the request is cancelled, the process keeps running). After the
// server died or wrote garbage, the next call starts it again (a fresh handshake; the tool
// list from the first start stays what is registered); a server that cannot be started again
// fails that call with the start's error. close() (and the destructor) closes the server's
// stdin, waits up to 1 s, then SIGTERMs its process group, waits up to 1 s, then SIGKILLs it.
//
// Thread-safety: every method may be called from any thread; tool calls run concurrently on
// one server process (JSON-RPC ids tell the answers apart). Docs: docs/providers.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "loom/agent/tool.h"

namespace loom::providers {

class McpConnection;

struct McpServerOptions {
  std::string name;                        // the server's name: taint origin "mcp:<name>"
  std::string command;                     // program, looked up on PATH ("npx", "node", ...)
  std::vector<std::string> args;           // its arguments
  std::map<std::string, std::string> env;  // set on top of what it inherits
  bool inheritEnv = true;  // loom's environment less its secret variables; false: base only
  std::string workingDirectory;            // empty = the current one
  int64_t timeoutMillis = 30'000;          // per request (handshake, list page, call)
};

// The protocol revision Loom asks for, and the ones it accepts from a server.
inline constexpr std::string_view kMcpProtocolVersion = "2025-06-18";
bool isSupportedMcpProtocolVersion(std::string_view version);

class McpClient {
 public:
  // Validates the options (InvalidArgumentError naming the option); starts nothing.
  explicit McpClient(McpServerOptions options);
  // close().
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  // Starts the server, runs the handshake and lists its tools. Throws UnavailableError,
  // DataLossError or DeadlineExceededError as above, and FailedPreconditionError when the
  // server answers with a protocol revision Loom does not speak. Call once, before anything
  // else; a failed start leaves no process behind.
  void start();

  const McpServerOptions& options() const { return options_; }
  // The tools listed at start(), as Loom tool definitions (name, description, inputSchema).
  const std::vector<agent::ToolDefinition>& toolDefinitions() const { return tools_; }
  // What the server said about itself in its initialize answer ({"name","version",...}).
  const json::value& serverInfo() const { return serverInfo_; }
  const std::string& protocolVersion() const { return protocolVersion_; }

  // Calls tool `name` and returns the raw MCP CallToolResult ({"content": [...], "isError"?,
  // "structuredContent"?}). Restarts a dead server first. Throws as above, InvalidArgumentError
  // for a JSON-RPC error answer, and FailedPreconditionError after close().
  json::value callTool(std::string_view name, const json::value& arguments);

  // Stops the server (see the header comment). Idempotent; later calls fail.
  void close();

  // The running server's process group id, 0 when none runs. The group is led by a guard that
  // relays the server's exit and kills the group if loom dies (util/guarded_child.h); signal
  // the server with kill(-pid(), ...).
  int pid() const;
  // The last bytes the current server process wrote to stderr (bounded).
  std::string stderrTail() const;

 private:
  std::shared_ptr<McpConnection> connection();  // the live one, or a freshly started one
  // Starts a process and runs the handshake; stores what the server said where asked to.
  std::shared_ptr<McpConnection> open(json::value* serverInfo, std::string* version);
  std::vector<agent::ToolDefinition> listTools(McpConnection& connection);

  McpServerOptions options_;
  std::vector<agent::ToolDefinition> tools_;  // set by start(), then read-only
  json::value serverInfo_;                    // set by start(), then read-only
  std::string protocolVersion_;               // set by start(), then read-only
  mutable std::mutex mu_;
  std::shared_ptr<McpConnection> connection_;  // GUARDED_BY(mu_)
  bool closed_ = false;                        // GUARDED_BY(mu_)
};

// A tool of an MCP server. call() sends tools/call through the client and returns
// tainted(mapMcpToolResult(...), "mcp:<server name>"). Thread-safe.
class McpTool : public agent::Tool {
 public:
  McpTool(std::shared_ptr<McpClient> client, agent::ToolDefinition definition);
  const agent::ToolDefinition& definition() const override { return definition_; }
  json::value call(const effects::EffectContext& ctx, const json::value& arguments) override;

 private:
  std::shared_ptr<McpClient> client_;  // keeps the server's client alive as long as the tool
  agent::ToolDefinition definition_;
};

// Maps an MCP CallToolResult to a Loom tool result (not yet tainted). Content items: text ->
// {"type":"text","text"}; image and audio -> media parts {"type","mimeType","data"}; resource
// -> {"type":"resource","uri","mimeType"?,"text"?|"blob"?}; resource_link -> {"type":
// "resource","uri","name"?,"mimeType"?,"description"?,"link":true}. When any item is not
// text, the result is {"parts": [...]} (rendered as message parts); otherwise it is
// structuredContent when the server sent one, else the texts joined with newlines.
// `isError: true` throws InvalidArgumentError "MCP tool '<tool>' on server '<server>'
// reported an error: <its text>", so the step fails and the model is told.
json::value mapMcpToolResult(const json::value& result, std::string_view server,
                             std::string_view tool);

// Starts an McpClient for `options` and registers each of its tools as a `tool` task (an
// McpTool). Returns the client: its toolDefinitions() go into AgentOptions.tools, and close()
// stops the server when the app shuts down. Throws what start() throws, and
// AlreadyExistsError when a tool's name is registered already (two servers with one tool
// name); on any throw the server is stopped.
std::shared_ptr<McpClient> registerMcpServer(effects::TaskRegistry& tasks,
                                             McpServerOptions options);

}  // namespace loom::providers
