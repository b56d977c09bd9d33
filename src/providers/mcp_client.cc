#include "loom/providers/mcp_client.h"

#include <set>

#include "loom/effects/taint.h"
#include "loom/util/error.h"
#include "mcp_connection.h"

#ifndef LOOM_VERSION
#error "LOOM_VERSION must be defined by the build (src/providers/CMakeLists.txt)"
#endif

namespace loom::providers {
namespace {

constexpr int64_t kGraceMillis = 1000;
constexpr int kMaxListPages = 1000;

}  // namespace

bool isSupportedMcpProtocolVersion(std::string_view version) {
  return version == "2025-06-18" || version == "2025-03-26" || version == "2024-11-05";
}

McpClient::McpClient(McpServerOptions options) : options_(std::move(options)) {
  if (options_.name.empty()) throw InvalidArgumentError("an MCP server needs a \"name\"");
  if (options_.command.empty()) {
    throw InvalidArgumentError("MCP server '" + options_.name + "' needs a \"command\"");
  }
  if (options_.timeoutMillis <= 0) {
    throw InvalidArgumentError("MCP server '" + options_.name +
                               "': timeoutMillis must be positive");
  }
}

McpClient::~McpClient() { close(); }

void McpClient::start() {
  auto connection = open(&serverInfo_, &protocolVersion_);
  try {
    tools_ = listTools(*connection);
  } catch (const Error&) {
    connection->stop(0);
    throw;
  }
  connection->markServing();
  std::lock_guard lock(mu_);
  connection_ = std::move(connection);
}

std::shared_ptr<McpConnection> McpClient::open(json::value* serverInfo, std::string* version) {
  auto connection = std::make_shared<McpConnection>(options_);
  const int64_t timeout = options_.timeoutMillis;
  try {
    json::value init = connection->request(
        "initialize",
        json::object{{"protocolVersion", kMcpProtocolVersion},
                     {"capabilities", json::object{}},
                     {"clientInfo", {{"name", "loom"}, {"version", LOOM_VERSION}}}},
        timeout);
    const auto* o = init.if_object();
    const auto* agreed = o ? o->if_contains("protocolVersion") : nullptr;
    if (agreed == nullptr || !agreed->is_string() ||
        !isSupportedMcpProtocolVersion(agreed->get_string())) {
      throw FailedPreconditionError(
          "MCP server '" + options_.name + "' answered initialize with protocol revision " +
          (agreed ? json::toText(*agreed) : std::string("(none)")) +
          "; Loom speaks 2025-06-18, 2025-03-26 and 2024-11-05 (use a server version that "
          "supports one of them)");
    }
    if (version) *version = std::string(agreed->get_string());
    if (const auto* info = o->if_contains("serverInfo"); info && serverInfo) *serverInfo = *info;
    connection->notify("notifications/initialized", nullptr, timeout);
  } catch (const Error&) {
    connection->stop(0);  // a failed start leaves no process behind
    throw;
  }
  return connection;
}

std::vector<agent::ToolDefinition> McpClient::listTools(McpConnection& connection) {
  std::vector<agent::ToolDefinition> tools;
  std::set<std::string> cursors;
  json::value cursor = nullptr;
  for (int page = 0;; ++page) {
    if (page >= kMaxListPages) {
      throw DataLossError("MCP server '" + options_.name + "' kept paging tools/list past " +
                          std::to_string(kMaxListPages) + " pages");
    }
    json::object params;
    if (!cursor.is_null()) params["cursor"] = cursor;
    json::value result =
        connection.request("tools/list", std::move(params), options_.timeoutMillis);
    const auto* o = result.if_object();
    const auto* list = o ? o->if_contains("tools") : nullptr;
    if (list == nullptr || !list->is_array()) {
      throw DataLossError("MCP server '" + options_.name +
                          "' answered tools/list without a \"tools\" array");
    }
    for (const auto& t : list->get_array()) {
      const auto* tool = t.if_object();
      const auto* name = tool ? tool->if_contains("name") : nullptr;
      if (name == nullptr || !name->is_string() || name->get_string().empty()) {
        throw DataLossError("MCP server '" + options_.name +
                            "' listed a tool without a name: " + json::toText(t));
      }
      agent::ToolDefinition def;
      def.name = std::string(name->get_string());
      if (auto d = json::optionalString(*tool, "description")) def.description = *d;
      if (const auto* schema = tool->if_contains("inputSchema")) def.inputSchema = *schema;
      tools.push_back(std::move(def));
    }
    const auto* next = o->if_contains("nextCursor");
    if (next == nullptr || next->is_null() || (next->is_string() && next->get_string().empty())) {
      return tools;
    }
    std::string key = json::toText(*next);
    if (!cursors.insert(key).second) {
      throw DataLossError("MCP server '" + options_.name + "' repeated the tools/list cursor " +
                          key);
    }
    cursor = *next;
  }
}

std::shared_ptr<McpConnection> McpClient::connection() {
  std::lock_guard lock(mu_);
  if (closed_) {
    throw FailedPreconditionError("MCP server '" + options_.name +
                                  "' was closed; its tools cannot be called any more");
  }
  if (connection_ && !connection_->broken()) return connection_;
  if (connection_) {
    connection_->stop(0);  // it is dead or unusable: make sure its process is gone
    connection_.reset();
  }
  connection_ = open(nullptr, nullptr);  // callers wait: at most one start at a time
  connection_->markServing();
  return connection_;
}

json::value McpClient::callTool(std::string_view name, const json::value& arguments) {
  auto connection = this->connection();
  json::value args = arguments.is_null() ? json::value(json::object{}) : arguments;
  return connection->request("tools/call",
                             json::object{{"name", name}, {"arguments", std::move(args)}},
                             options_.timeoutMillis);
}

void McpClient::close() {
  std::shared_ptr<McpConnection> connection;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    connection = std::move(connection_);
  }
  if (connection) connection->stop(kGraceMillis);
}

int McpClient::pid() const {
  std::lock_guard lock(mu_);
  return connection_ && !connection_->broken() ? connection_->pid() : 0;
}

std::string McpClient::stderrTail() const {
  std::lock_guard lock(mu_);
  return connection_ ? connection_->stderrTail() : std::string();
}

McpTool::McpTool(std::shared_ptr<McpClient> client, agent::ToolDefinition definition)
    : client_(std::move(client)), definition_(std::move(definition)) {}

json::value McpTool::call(const effects::EffectContext&, const json::value& arguments) {
  const std::string& server = client_->options().name;
  json::value result = client_->callTool(definition_.name, arguments);
  return effects::tainted(mapMcpToolResult(result, server, definition_.name), "mcp:" + server);
}

std::shared_ptr<McpClient> registerMcpServer(effects::TaskRegistry& tasks,
                                             McpServerOptions options) {
  auto client = std::make_shared<McpClient>(std::move(options));
  client->start();
  std::set<std::string> names;
  for (const auto& def : client->toolDefinitions()) {
    if (tasks.find(def.name) != nullptr || !names.insert(def.name).second) {
      client->close();
      throw AlreadyExistsError("MCP server '" + client->options().name + "' lists a tool '" +
                               def.name +
                               "', but a task of that name is registered already (or "
                               "the server lists it twice); tool names must be unique across "
                               "all tools and MCP servers of an app");
    }
  }
  for (const auto& def : client->toolDefinitions()) {
    agent::registerTool(tasks, std::make_shared<McpTool>(client, def));
  }
  return client;
}

}  // namespace loom::providers
