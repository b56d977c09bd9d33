#include "agent_app_option_rows.h"

#include <algorithm>

namespace loom::app {
namespace {

constexpr double kMaxBytes = 1099511627776.0;  // 1 TiB: "no limit" in practice
constexpr double kMaxTurns = 99999;
constexpr std::size_t kMaxNameChars = 64;

OptionRow& addRow(std::vector<OptionRow>& rows, std::string path, OptionType type,
                  std::string description, std::string defaultText = "") {
  OptionRow& r = rows.emplace_back();
  r.path = std::move(path);
  r.type = type;
  r.description = std::move(description);
  r.defaultText = std::move(defaultText);
  return r;
}

AgentSection& agent(Config& c) { return c.agent ? *c.agent : c.agent.emplace(); }
ModelSection& model(Config& c) { return c.model ? *c.model : c.model.emplace(); }
AgentCompactionSection& compaction(Config& c) {
  AgentSection& a = agent(c);
  return a.compaction ? *a.compaction : a.compaction.emplace();
}

// A section's value, or its default when the section is unset (what validation checks).
const AgentSection& agentOrDefault(const Config& c) {
  static const AgentSection kDefault;
  return c.agent ? *c.agent : kDefault;
}
const ModelSection& modelOrDefault(const Config& c) {
  static const ModelSection kDefault;
  return c.model ? *c.model : kDefault;
}
const AgentCompactionSection& compactionOrDefault(const Config& c) {
  static const AgentCompactionSection kDefault;
  const AgentSection& a = agentOrDefault(c);
  return a.compaction ? *a.compaction : kDefault;
}

// describeConfig skips an empty text: a file without an agent shows none of its options.
template <typename Get>
void bindAgentValue(OptionRow& r, bool present(const Config&), Get get) {
  r.get = [get](const Config& c) { return OptionValue(get(c)); };
  r.show = [present, get](const Config& c) {
    return present(c) ? optionValueText(OptionValue(get(c))) : std::string();
  };
}

bool hasAgent(const Config& c) { return c.agent.has_value(); }
bool hasModel(const Config& c) { return c.model.has_value(); }
bool hasOpenAiModel(const Config& c) { return c.model && c.model->kind == "openai"; }
bool hasCompaction(const Config& c) { return c.agent && c.agent->compaction; }

bool isNameChar(char ch, bool dotAllowed) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '-' || (dotAllowed && ch == '.');
}

// What is wrong with a name ("" when nothing): agent names may hold dots, tool names not
// (a tool name is also a function name in a model's API).
std::string nameProblem(const std::string& name, bool dotAllowed) {
  if (name.empty()) return "missing; give it a name";
  bool ok = name.size() <= kMaxNameChars && std::all_of(name.begin(), name.end(), [&](char ch) {
              return isNameChar(ch, dotAllowed);
            });
  if (ok) return "";
  return "\"" + name + "\" is not a valid name; use 1 to 64 of A-Z a-z 0-9 _ -" +
         (dotAllowed ? " ." : "");
}

void checkTool(const ToolSection& tool, const std::string& path, ConfigIssues& issues) {
  if (std::string p = nameProblem(tool.name, false); !p.empty()) {
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
    if (key == "returnsMedia") tool.returnsMedia = std::get<bool>(value);
    if (key == "inputSchema") {
      tool.inputSchema = json::parse(std::get<std::string>(value), path + ".inputSchema");
    }
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
  if (std::string p = nameProblem(server.name, false); !p.empty()) {
    issues.push_back({path + ".name", p});
  }
  if (server.command.empty()) {
    issues.push_back({path + ".command", "missing; give the program that runs the server"});
  }
}

void addMcpEntry(Config& c, const OptionEntry& entry, const std::string& path,
                 ConfigIssues& issues) {
  McpServerSection server;
  for (const auto& [key, value] : entry) {
    if (key == "name") server.name = std::get<std::string>(value);
    if (key == "command") server.command = std::get<std::string>(value);
    if (key == "args") server.args = std::get<std::vector<std::string>>(value);
    if (key == "env") {
      json::value env = json::parse(std::get<std::string>(value), path + ".env");
      for (const auto& member : env.as_object()) {
        if (!member.value().is_string()) {
          issues.push_back({path + ".env." + std::string(member.key()), "expected a string"});
          continue;
        }
        server.env.emplace_back(member.key(), member.value().get_string());
      }
    }
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

void addAgentRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r = addRow(rows, "agent", OptionType::kTable,
                          "An agent app's loop (`loom run app.toml`; see examples/agents/). A "
                          "file with `[agent]` defines one durable tool-calling agent; it also "
                          "needs `[model]`, and may have `[[tools]]` and any config group.");
    r.set = [](Config& c, const OptionValue&) { agent(c); };
  }
  {
    OptionRow& r = addRow(rows, "agent.name", OptionType::kString,
                          "The agent loop's name: its steps are `<name>#turn:<i>:model` and "
                          "`<name>#turn:<i>:tool:<j>`, and its runs' workflow is named after "
                          "it. 1 to 64 of A-Z a-z 0-9 _ . -");
    r.required = true;  // checked by validateAgentApp when [agent] is present
    r.set = [](Config& c, const OptionValue& v) { agent(c).name = std::get<std::string>(v); };
    r.show = [](const Config& c) {
      return c.agent ? optionValueText(c.agent->name) : std::string();
    };
  }
  {
    OptionRow& r = addRow(rows, "agent.prompt", OptionType::kString,
                          "The prompt of a run given neither `--prompt` nor `--input`.", "\"\"");
    r.set = [](Config& c, const OptionValue& v) { agent(c).prompt = std::get<std::string>(v); };
    bindAgentValue(r, hasAgent, [](const Config& c) { return agentOrDefault(c).prompt; });
  }
  {
    OptionRow& r =
        addRow(rows, "agent.system", OptionType::kString,
               "The system prompt, the transcript's first message; empty: none.", "\"\"");
    r.set = [](Config& c, const OptionValue& v) { agent(c).system = std::get<std::string>(v); };
    bindAgentValue(r, hasAgent, [](const Config& c) { return agentOrDefault(c).system; });
  }
  {
    OptionRow& r = addRow(rows, "agent.maxTurns", OptionType::kInteger,
                          "After this many model turns the run ends with outcome `maxTurns` "
                          "(a result, not a failure).",
                          "50");
    r.min = 1;
    r.max = kMaxTurns;
    r.set = [](Config& c, const OptionValue& v) { agent(c).maxTurns = std::get<int64_t>(v); };
    bindAgentValue(r, hasAgent, [](const Config& c) { return agentOrDefault(c).maxTurns; });
  }
  {
    OptionRow& r = addRow(rows, "agent.warnTranscriptBytes", OptionType::kInteger,
                          "The state-growth warning (ADR 0137): once per run, when the "
                          "transcript passes this many bytes, a report-only warning goes to "
                          "observability.onWarn (stderr: `loom: warning: ...`) naming "
                          "compaction and execution.claimCheck. 0: off.",
                          "0");
    r.min = 0;
    r.max = kMaxBytes;
    r.set = [](Config& c, const OptionValue& v) {
      agent(c).warnTranscriptBytes = std::get<int64_t>(v);
    };
    bindAgentValue(r, hasAgent,
                   [](const Config& c) { return agentOrDefault(c).warnTranscriptBytes; });
  }
  {
    OptionRow& r = addRow(rows, "agent.compaction", OptionType::kTable,
                          "Compaction (ADR 0137): when the transcript passes `triggerBytes`, an "
                          "`llm` step `<name>#turn:<i>:compact` asks the model for a summary "
                          "that replaces the older messages. Unset: the transcript only grows.");
    r.set = [](Config& c, const OptionValue&) { compaction(c); };
  }
  {
    OptionRow& r = addRow(rows, "agent.compaction.triggerBytes", OptionType::kInteger,
                          "Compact when the transcript passes this many bytes.");
    r.required = true;  // checked by validateAgentApp when [agent.compaction] is present
    r.min = 1;
    r.max = kMaxBytes;
    r.set = [](Config& c, const OptionValue& v) {
      compaction(c).triggerBytes = std::get<int64_t>(v);
    };
    r.show = [](const Config& c) {
      return hasCompaction(c) ? optionValueText(compactionOrDefault(c).triggerBytes)
                              : std::string();
    };
  }
  {
    OptionRow& r = addRow(rows, "agent.compaction.keepLastTurns", OptionType::kInteger,
                          "Turns kept verbatim after the summary.", "2");
    r.min = 0;
    r.max = kMaxTurns;
    r.set = [](Config& c, const OptionValue& v) {
      compaction(c).keepLastTurns = std::get<int64_t>(v);
    };
    bindAgentValue(r, hasCompaction,
                   [](const Config& c) { return compactionOrDefault(c).keepLastTurns; });
  }
  {
    OptionRow& r = addRow(rows, "agent.compaction.model", OptionType::kString,
                          "The model that writes the summary, by id; empty: the app's model "
                          "(the only one an app file defines).",
                          "\"\"");
    r.set = [](Config& c, const OptionValue& v) { compaction(c).model = std::get<std::string>(v); };
    bindAgentValue(r, hasCompaction, [](const Config& c) { return compactionOrDefault(c).model; });
  }
}

void addModelRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r = addRow(rows, "model", OptionType::kTable,
                          "An agent app's model; its turns run as `llm` effects under the "
                          "model's id (`scripted`, `openai:<model>`).");
    r.set = [](Config& c, const OptionValue&) { model(c); };
  }
  {
    OptionRow& r = addRow(rows, "model.kind", OptionType::kString,
                          "`scripted`: a deterministic model driven by a script file (demos, "
                          "tests, benchmarks); `openai`: an OpenAI-compatible HTTP server.",
                          "\"scripted\"");
    r.allowed = {"scripted", "openai"};
    r.set = [](Config& c, const OptionValue& v) { model(c).kind = std::get<std::string>(v); };
    bindAgentValue(r, hasModel, [](const Config& c) { return modelOrDefault(c).kind; });
  }
  {
    OptionRow& r = addRow(rows, "model.script", OptionType::kString,
                          "(kind `scripted`) The script, a .json or .toml file relative to the "
                          "app file: explicit `turns` and/or a `generate` form (see "
                          "include/loom/providers/scripted_model.h). Required for `scripted`.");
    r.set = [](Config& c, const OptionValue& v) { model(c).script = std::get<std::string>(v); };
    bindAgentValue(r, hasModel, [](const Config& c) { return modelOrDefault(c).script; });
  }
  auto openAiRow = [&rows](std::string key, OptionType type, std::string description,
                           std::string dflt) -> OptionRow& {
    OptionRow& r =
        addRow(rows, "model." + key, type, "(kind `openai`) " + description, std::move(dflt));
    if (!kOpenAiModelWired) {
      r.support = Support::kNotYet;
      r.arrivesWith = "the OpenAI-compatible model work";
    }
    return r;
  };
  {
    OptionRow& r = openAiRow("baseUrl", OptionType::kString,
                             "The API root, e.g. `https://api.openai.com/v1` or "
                             "`http://127.0.0.1:8080/v1`. Required for `openai`.",
                             "");
    r.set = [](Config& c, const OptionValue& v) { model(c).baseUrl = std::get<std::string>(v); };
    bindAgentValue(r, hasOpenAiModel, [](const Config& c) { return modelOrDefault(c).baseUrl; });
  }
  {
    OptionRow& r = openAiRow("model", OptionType::kString,
                             "The model name the server knows. Required for `openai`.", "");
    r.set = [](Config& c, const OptionValue& v) { model(c).model = std::get<std::string>(v); };
    bindAgentValue(r, hasOpenAiModel, [](const Config& c) { return modelOrDefault(c).model; });
  }
  {
    OptionRow& r = openAiRow("apiKeyEnv", OptionType::kString,
                             "The environment variable that holds the API key (read at start; "
                             "never journaled); empty: send no key.",
                             "\"OPENAI_API_KEY\"");
    r.set = [](Config& c, const OptionValue& v) { model(c).apiKeyEnv = std::get<std::string>(v); };
    bindAgentValue(r, hasOpenAiModel, [](const Config& c) { return modelOrDefault(c).apiKeyEnv; });
  }
  {
    OptionRow& r = openAiRow("timeoutMillis", OptionType::kInteger,
                             "How long one request may take, in milliseconds.", "120000");
    r.min = 1;
    r.max = 86'400'000;
    r.set = [](Config& c, const OptionValue& v) { model(c).timeoutMillis = std::get<int64_t>(v); };
    bindAgentValue(r, hasOpenAiModel,
                   [](const Config& c) { return modelOrDefault(c).timeoutMillis; });
  }
}

void addToolRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r = addRow(rows, "tools", OptionType::kTableArray,
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
    OptionRow& r = addRow(rows, "tools[].name", OptionType::kString,
                          "What the model calls, and the effect id (what `loom kill` and "
                          "execution.claimCheck.toolIds name). 1 to 64 of A-Z a-z 0-9 _ -; "
                          "unique.");
    r.required = true;
  }
  addRow(rows, "tools[].description", OptionType::kString,
         "What the tool does, shown to the model.");
  {
    OptionRow& r = addRow(rows, "tools[].command", OptionType::kStringList,
                          "The program and its arguments (no shell). A program path with a `/` "
                          "is relative to the app file's folder; a bare name is looked up on "
                          "PATH.");
    r.required = true;
  }
  {
    OptionRow& r =
        addRow(rows, "tools[].timeoutMillis", OptionType::kInteger,
               "A call that takes longer is killed and fails (deadlineExceeded).", "30000");
    r.min = 1;
    r.max = 86'400'000;
  }
  addRow(rows, "tools[].untrusted", OptionType::kBoolean,
         "Its results are recorded tainted (`tool:<name>`, ADR 0085): the loop fences them in "
         "the prompt as data, not instructions, and records the origin in `sawTaintFrom`.",
         "false");
  addRow(rows, "tools[].requiresApproval", OptionType::kBoolean,
         "The run parks before each call (reason `approval`) until `loom signal <id> "
         "approve:<stepId> '{\"approved\": true}'`; `false` tells the model it was denied.",
         "false");
  addRow(rows, "tools[].returnsMedia", OptionType::kBoolean,
         "Results are `{\"parts\": [...]}` media parts, rendered into the model message.", "false");
  addRow(rows, "tools[].inputSchema", OptionType::kInlineTable,
         "JSON Schema of the arguments, shown to the model: `{ type = \"object\", properties = "
         "{ page = { type = \"integer\" } } }`. Unset: any object.");
  {
    OptionRow& r = addRow(rows, "tools.mcp", OptionType::kTableArray,
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
    OptionRow& r = addRow(rows, "tools.mcp[].name", OptionType::kString,
                          "The server's name (taint origin `mcp:<name>`).");
    r.required = true;
  }
  {
    OptionRow& r = addRow(rows, "tools.mcp[].command", OptionType::kString,
                          "The program that runs the server, looked up on PATH (`npx`, ...).");
    r.required = true;
  }
  addRow(rows, "tools.mcp[].args", OptionType::kStringList, "Its arguments.", "[]");
  addRow(rows, "tools.mcp[].env", OptionType::kInlineTable,
         "Variables added to its environment: `{ NAME = \"value\" }`.", "{}");
}

}  // namespace

void addAgentAppRows(std::vector<OptionRow>& rows) {
  addAgentRows(rows);
  addModelRows(rows);
  addToolRows(rows);
}

void validateAgentApp(const Config& config, ConfigIssues& issues) {
  bool anySection =
      config.agent || config.model || !config.tools.empty() || !config.mcpServers.empty();
  if (!anySection) return;
  if (!config.agent) {
    issues.push_back({"agent",
                      "missing: [model] and [[tools]] belong to an agent app, which needs an "
                      "[agent] table with a name"});
  } else {
    if (std::string p = nameProblem(config.agent->name, true); !p.empty()) {
      issues.push_back({"agent.name", p});
    }
    if (config.agent->compaction && config.agent->compaction->triggerBytes < 1) {
      issues.push_back({"agent.compaction.triggerBytes",
                        "missing; [agent.compaction] needs triggerBytes = <bytes>"});
    }
    if (!config.model) {
      issues.push_back({"model",
                        "missing: an agent needs a [model] table, e.g. kind = \"scripted\" "
                        "and script = \"scripts/agent.json\""});
    }
  }
  if (const auto& m = config.model) {
    if (m->kind == "scripted" && m->script.empty()) {
      issues.push_back({"model.script",
                        "missing; kind = \"scripted\" needs script = \"<file>.json\" (or "
                        ".toml), relative to the app file"});
    }
    if (m->kind == "openai" && !kOpenAiModelWired) {
      issues.push_back({"model.kind",
                        "\"openai\" is not supported by this build yet (it arrives with the "
                        "OpenAI-compatible model work); use kind = \"scripted\""});
    } else if (m->kind == "openai") {
      if (m->baseUrl.empty())
        issues.push_back({"model.baseUrl",
                          "missing; kind = \"openai\" "
                          "needs the API root"});
      if (m->model.empty())
        issues.push_back({"model.model",
                          "missing; kind = \"openai\" needs "
                          "the model name"});
    }
  }
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

}  // namespace loom::app
