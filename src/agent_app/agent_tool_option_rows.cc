// The rows of an agent app's [[tools]] and [[tools.mcp]], their entries and their checks.
#include "agent_app/agent_app_option_rows.h"
#include "loom/util/clock.h"

namespace loom::agent_app {
namespace {

void checkTool(const ToolSection& tool, const std::string& path, ConfigIssues& issues) {
  if (std::string p = agentAppNameProblem(tool.name, false); !p.empty()) {
    issues.push_back({path + ".name", p});
  }
  if (tool.command.empty() || tool.command.front().empty()) {
    issues.push_back({path + ".command",
                      "missing; give the program and its arguments, e.g. command = "
                      "[\"tools/fetch_report\"] (relative to the app file's folder)"});
  }
  if (tool.timeoutMillis < 1) {
    issues.push_back({path + ".timeoutMillis", "expected at least 1 millisecond"});
  }
  if (!tool.inputSchema.is_null() && !tool.inputSchema.is_object()) {
    issues.push_back({path + ".inputSchema", "expected a JSON Schema object"});
  }
  if (tool.onApprovalTimeout != "deny" && tool.onApprovalTimeout != "approve" &&
      tool.onApprovalTimeout != "fail") {
    issues.push_back({path + ".onApprovalTimeout", "'" + tool.onApprovalTimeout +
                                                       "' is not one of \"deny\", \"approve\", "
                                                       "\"fail\""});
  }
  if (tool.approvalTimeoutMillis > 0 && !tool.requiresApproval) {
    issues.push_back({path + ".approvalTimeout",
                      "set, but the tool does not require approval; add requiresApproval = "
                      "true or remove it"});
  }
}

// A tool name another tool (earlier in `tools`) already has.
bool takenBefore(const std::vector<ToolSection>& tools, std::size_t end, const std::string& name) {
  for (std::size_t i = 0; i < end && i < tools.size(); ++i) {
    if (tools[i].name == name) return true;
  }
  return false;
}

std::string duplicateToolMessage(const std::string& name) {
  return "\"" + name +
         "\" is the name of an earlier tool; tool names are effect ids and must be unique";
}

// `env = { NAME = "value" }` of a tool or an MCP server.
std::vector<std::pair<std::string, std::string>> envEntries(const std::string& text,
                                                            const std::string& path,
                                                            ConfigIssues& issues) {
  std::vector<std::pair<std::string, std::string>> out;
  json::value env = json::parse(text, path + ".env");
  for (const auto& member : env.as_object()) {
    if (!member.value().is_string()) {
      issues.push_back({path + ".env." + std::string(member.key()), "expected a string"});
      continue;
    }
    out.emplace_back(member.key(), member.value().get_string());
  }
  return out;
}

void addToolEntry(Config& c, const OptionEntry& entry, const std::string& path,
                  ConfigIssues& issues) {
  ToolSection tool;
  for (const auto& [key, value] : entry) {
    if (key == "name") tool.name = std::get<std::string>(value);
    if (key == "description") tool.description = std::get<std::string>(value);
    if (key == "command") tool.command = std::get<std::vector<std::string>>(value);
    if (key == "timeoutMillis") tool.timeoutMillis = std::get<int64_t>(value);
    if (key == "untrusted") tool.untrusted = std::get<bool>(value);
    if (key == "requiresApproval") tool.requiresApproval = std::get<bool>(value);
    if (key == "approvalTimeout") {
      try {
        tool.approvalTimeoutMillis = parseDurationMillis(std::get<std::string>(value));
      } catch (const InvalidArgumentError& e) {
        issues.push_back({path + ".approvalTimeout", e.what()});
      }
    }
    if (key == "onApprovalTimeout") tool.onApprovalTimeout = std::get<std::string>(value);
    if (key == "returnsMedia") tool.returnsMedia = std::get<bool>(value);
    if (key == "inputSchema") {
      tool.inputSchema = json::parse(std::get<std::string>(value), path + ".inputSchema");
    }
    if (key == "env") tool.env = envEntries(std::get<std::string>(value), path, issues);
    if (key == "inheritEnv") tool.inheritEnv = std::get<bool>(value);
  }
  std::size_t before = issues.size();
  checkTool(tool, path, issues);
  if (!tool.name.empty() && takenBefore(c.tools, c.tools.size(), tool.name)) {
    issues.push_back({path + ".name", duplicateToolMessage(tool.name)});
  }
  // Only a valid tool is added, so validateAgentApp finds nothing to report twice.
  if (issues.size() == before) c.tools.push_back(std::move(tool));
}

void checkMcpServer(const McpServerSection& server, const std::string& path, ConfigIssues& issues) {
  if (std::string p = agentAppNameProblem(server.name, false); !p.empty()) {
    issues.push_back({path + ".name", p});
  }
  if (server.command.empty()) {
    issues.push_back({path + ".command", "missing; give the program that runs the server"});
  }
  if (server.timeoutMillis < 1) {
    issues.push_back({path + ".timeoutMillis", "expected at least 1 millisecond"});
  }
}

void addMcpEntry(Config& c, const OptionEntry& entry, const std::string& path,
                 ConfigIssues& issues) {
  McpServerSection server;
  for (const auto& [key, value] : entry) {
    if (key == "name") server.name = std::get<std::string>(value);
    if (key == "command") server.command = std::get<std::string>(value);
    if (key == "args") server.args = std::get<std::vector<std::string>>(value);
    if (key == "env") server.env = envEntries(std::get<std::string>(value), path, issues);
    if (key == "inheritEnv") server.inheritEnv = std::get<bool>(value);
    if (key == "workingDirectory") server.workingDirectory = std::get<std::string>(value);
    if (key == "timeoutMillis") server.timeoutMillis = std::get<int64_t>(value);
  }
  std::size_t before = issues.size();
  checkMcpServer(server, path, issues);
  if (issues.size() == before) c.mcpServers.push_back(std::move(server));
}

std::string showTools(const Config& c) {
  if (c.tools.empty()) return "";
  std::string out = "[";
  for (const auto& t : c.tools) {
    if (out.size() > 1) out += ", ";
    out += t.name + "(command = " + optionValueText(t.command);
    if (t.requiresApproval) out += ", requiresApproval";
    if (t.untrusted) out += ", untrusted";
    if (t.returnsMedia) out += ", returnsMedia";
    out += ")";
  }
  return out + "]";
}

}  // namespace

void addToolRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r =
        addAgentAppRow(rows, "tools", OptionType::kTableArray,
                       "An agent app's subprocess tools: each is a program that reads its "
                       "JSON arguments on stdin and writes one JSON result on stdout (a "
                       "non-zero exit or bad JSON is a failed call the model is told about). "
                       "Each call is a `tool` effect under the tool's name, run in the app "
                       "file's folder.",
                       "[]");
    r.addEntry = addToolEntry;
    r.show = showTools;
  }
  {
    OptionRow& r = addAgentAppRow(rows, "tools[].name", OptionType::kString,
                                  "What the model calls, and the effect id (what `loom kill` and "
                                  "execution.claimCheck.toolIds name). 1 to 64 of A-Z a-z 0-9 _ -; "
                                  "unique.");
    r.required = true;
  }
  addAgentAppRow(rows, "tools[].description", OptionType::kString,
                 "What the tool does, shown to the model.");
  {
    OptionRow& r =
        addAgentAppRow(rows, "tools[].command", OptionType::kStringList,
                       "The program and its arguments (no shell). A program path with a `/` "
                       "is relative to the app file's folder; a bare name is looked up on "
                       "PATH.");
    r.required = true;
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "tools[].timeoutMillis", OptionType::kInteger,
                       "A call that takes longer is killed and fails (deadlineExceeded).", "30000");
    r.min = 1;
    r.max = 86'400'000;
  }
  addAgentAppRow(
      rows, "tools[].untrusted", OptionType::kBoolean,
      "Its results are recorded tainted (`tool:<name>`, ADR 0085): the loop fences them in "
      "the prompt as data, not instructions, and records the origin in `sawTaintFrom`.",
      "false");
  addAgentAppRow(rows, "tools[].requiresApproval", OptionType::kBoolean,
                 "The run parks before each call (reason `approval`) until `loom signal <id> "
                 "approve:<stepId> '{\"approved\": true}'`; `false` tells the model it was denied.",
                 "false");
  addAgentAppRow(rows, "tools[].approvalTimeout", OptionType::kString,
                 "With requiresApproval: how long a call waits for the decision (\"30s\", "
                 "\"15m\", \"24h\", \"7d\"); the run parks with that wake time and `loom "
                 "worker` (or a resume) applies onApprovalTimeout once it has passed. Unset: it "
                 "waits for ever.");
  addAgentAppRow(rows, "tools[].onApprovalTimeout", OptionType::kString,
                 "What a call nobody decided on in time gets: `deny` (the model is told it "
                 "timed out), `approve` (it runs) or `fail` (the run fails). The decision is "
                 "recorded, so a signal arriving later changes nothing.",
                 "\"deny\"");
  addAgentAppRow(rows, "tools[].returnsMedia", OptionType::kBoolean,
                 "Results are `{\"parts\": [...]}` media parts, rendered into the model message. "
                 "execution.claimCheck leaves such a media result inline; any other result of "
                 "the tool is offloaded over the cap like any tool's.",
                 "false");
  addAgentAppRow(
      rows, "tools[].inputSchema", OptionType::kInlineTable,
      "JSON Schema of the arguments, shown to the model: `{ type = \"object\", properties = "
      "{ page = { type = \"integer\" } } }`. Unset: any object.");
  addAgentAppRow(rows, "tools[].env", OptionType::kInlineTable,
                 "Variables set in its environment: `{ NAME = \"value\" }` (they win over the "
                 "inherited ones, a secret variable included).",
                 "{}");
  addAgentAppRow(rows, "tools[].inheritEnv", OptionType::kBoolean,
                 "It inherits loom's environment, less every variable Loom reads a secret from "
                 "(security.keys.env, model.apiKeyEnv, security.redact env secrets). `false`: "
                 "only PATH, HOME, LANG, LC_ALL, TZ, TMPDIR and USER, plus `env`.",
                 "true");
  {
    OptionRow& r =
        addAgentAppRow(rows, "tools.mcp", OptionType::kTableArray,
                       "MCP servers over stdio (`[[tools.mcp]]`): every tool a server lists "
                       "becomes a `tool` effect under its own name; results are untrusted "
                       "(`mcp:<name>`).",
                       "[]");
    r.addEntry = addMcpEntry;
    if (!kMcpToolsWired) {
      r.support = Support::kNotYet;
      r.arrivesWith = "the MCP client work";
    }
  }
  {
    OptionRow& r = addAgentAppRow(rows, "tools.mcp[].name", OptionType::kString,
                                  "The server's name (taint origin `mcp:<name>`).");
    r.required = true;
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "tools.mcp[].command", OptionType::kString,
                       "The program that runs the server, looked up on PATH (`npx`, ...).");
    r.required = true;
  }
  addAgentAppRow(rows, "tools.mcp[].args", OptionType::kStringList, "Its arguments.", "[]");
  addAgentAppRow(rows, "tools.mcp[].env", OptionType::kInlineTable,
                 "Variables set in its environment: `{ NAME = \"value\" }`.", "{}");
  addAgentAppRow(rows, "tools.mcp[].inheritEnv", OptionType::kBoolean,
                 "As `tools[].inheritEnv`: loom's environment less every secret variable, or "
                 "with `false` only the base variables plus `env`.",
                 "true");
  addAgentAppRow(rows, "tools.mcp[].workingDirectory", OptionType::kString,
                 "The folder the server runs in, relative to the app file's folder (a server "
                 "given relative paths, like server-filesystem's, resolves them there).",
                 "\"\" (the app file's folder)");
  {
    OptionRow& r = addAgentAppRow(rows, "tools.mcp[].timeoutMillis", OptionType::kInteger,
                                  "How long one request may take (the handshake, a page of "
                                  "tools/list, a tool call); a call past it fails "
                                  "deadlineExceeded and is cancelled, the server keeps running.",
                                  "30000");
    r.min = 1;
    r.max = 86'400'000;
  }
}

void validateTools(const Config& config, ConfigIssues& issues) {
  for (std::size_t i = 0; i < config.tools.size(); ++i) {
    std::string path = "tools[" + std::to_string(i) + "]";
    checkTool(config.tools[i], path, issues);
    if (!config.tools[i].name.empty() && takenBefore(config.tools, i, config.tools[i].name)) {
      issues.push_back({path + ".name", duplicateToolMessage(config.tools[i].name)});
    }
  }
  for (std::size_t i = 0; i < config.mcpServers.size(); ++i) {
    checkMcpServer(config.mcpServers[i], "tools.mcp[" + std::to_string(i) + "]", issues);
  }
  if (!kMcpToolsWired && !config.mcpServers.empty()) {
    issues.push_back({"tools.mcp",
                      "not supported by this build yet (it arrives with the MCP "
                      "client work); remove it"});
  }
}

}  // namespace loom::agent_app
