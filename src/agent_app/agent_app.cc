#include "loom/agent_app/agent_app.h"

#include <unistd.h>

#include <cstdlib>
#include <set>
#include <system_error>

#include "loom/agent/model_input.h"
#include "loom/middleware/warn_sink.h"
#include "loom/providers/openai_model.h"
#include "loom/providers/scripted_model.h"
#include "loom/providers/subprocess_tool.h"
#include "loom/util/error.h"
#include "loom/workflow/code_version.h"

namespace loom::agent_app {
namespace {

namespace fs = std::filesystem;
using app::ConfigIssues;

// The app's model as registered: the configured model, counting the completions it returned.
class CountingModel : public agent::Model {
 public:
  explicit CountingModel(std::shared_ptr<agent::Model> inner) : inner_(std::move(inner)) {}
  const std::string& id() const override { return inner_->id(); }
  json::value complete(const effects::EffectContext& ctx,
                       const agent::ModelRequest& request) override {
    json::value answer = inner_->complete(ctx, request);
    count_->fetch_add(1);  // completions, not attempts: a failed call counts nothing
    return answer;
  }
  std::shared_ptr<const std::atomic<int64_t>> counter() const { return count_; }

 private:
  std::shared_ptr<agent::Model> inner_;
  std::shared_ptr<std::atomic<int64_t>> count_ = std::make_shared<std::atomic<int64_t>>(0);
};

bool isExecutableFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

// The program of a tool command: a path with a `/` against the app's folder, a bare name on
// PATH. Adds an issue and returns nullopt when there is no executable file.
std::optional<std::string> resolveProgram(const std::string& program, const fs::path& folder,
                                          const std::string& path, ConfigIssues& issues) {
  if (program.find('/') != std::string::npos) {
    fs::path resolved = fs::path(program).is_absolute() ? fs::path(program) : folder / program;
    resolved = resolved.lexically_normal();
    std::error_code ec;
    if (!fs::exists(resolved, ec)) {
      issues.push_back({path, "no such program " + resolved.string() +
                                  " (a path with a `/` is relative to the app file's folder)"});
      return std::nullopt;
    }
    if (!isExecutableFile(resolved)) {
      issues.push_back(
          {path, resolved.string() + " is not an executable file; make it one (chmod +x)"});
      return std::nullopt;
    }
    return resolved.string();
  }
  const char* searchPath = std::getenv("PATH");
  std::string_view dirs = searchPath ? searchPath : "/usr/bin:/bin";
  while (!dirs.empty()) {
    std::size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    if (!dir.empty() && isExecutableFile(fs::path(dir) / program)) return program;
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
  }
  issues.push_back({path, "no program \"" + program + "\" on PATH; install it, or write its " +
                              "path (relative to the app file's folder)"});
  return std::nullopt;
}

// A value written "${NAME}" is read from the environment variable NAME (model.baseUrl and
// model.model, so one app file serves several endpoints); an unset one is a problem at `path`.
std::string fromEnvironment(const std::string& value, const std::string& path,
                            ConfigIssues& issues) {
  std::optional<std::string> reference = app::environmentReference(value);
  if (!reference) return value;
  const std::string& name = *reference;
  const char* set = std::getenv(name.c_str());
  if (set == nullptr || *set == '\0') {
    issues.push_back({path, "the environment variable " + name + " is not set; export it (e.g. " +
                                name + "=...) or write the value"});
    return value;
  }
  return set;
}

std::shared_ptr<agent::Model> buildOpenAiModel(const app::ModelSection& section,
                                               ConfigIssues& issues) {
  providers::OpenAiModelOptions options;
  std::size_t before = issues.size();
  options.baseUrl = fromEnvironment(section.baseUrl, "model.baseUrl", issues);
  options.model = fromEnvironment(section.model, "model.model", issues);
  if (issues.size() != before) return nullptr;
  options.apiKeyEnv = section.apiKeyEnv;
  options.timeoutMillis = section.timeoutMillis;
  options.maxRetries = static_cast<int>(section.maxRetries);
  options.initialBackoffMillis = section.initialBackoffMillis;
  options.maxBackoffMillis = section.maxBackoffMillis;
  for (const auto& header : section.headers) {
    options.headers[std::string(header.key())] =
        fromEnvironment(std::string(header.value().get_string()),
                        "model.headers." + std::string(header.key()), issues);
  }
  options.extraBody = section.extraBody;
  if (issues.size() != before) return nullptr;
  try {
    return std::make_shared<providers::OpenAiModel>(std::move(options));
  } catch (const FailedPreconditionError& e) {  // the key's variable is unset
    issues.push_back({"model.apiKeyEnv", e.what()});
  } catch (const InvalidArgumentError& e) {
    issues.push_back({"model", e.what()});
  }
  return nullptr;
}

std::shared_ptr<agent::Model> buildModel(const app::ModelSection& section, const fs::path& folder,
                                         ConfigIssues& issues) {
  if (section.kind == "openai") return buildOpenAiModel(section, issues);
  // validateAgentApp refused every other kind already.
  fs::path script = (folder / section.script).lexically_normal();
  try {
    return std::make_shared<providers::ScriptedModel>(
        "scripted", providers::ScriptedModel::loadScript(script.string()),
        "the model script " + script.string() + " (model.script)");
  } catch (const NotFoundError&) {
    issues.push_back({"model.script", "no such file " + script.string() +
                                          " (model.script is relative to the app file's folder)"});
  } catch (const InvalidArgumentError& e) {
    issues.push_back(
        {"model.script", script.string() + " is not a valid model script: " + e.what()});
  }
  return nullptr;
}

agent::ToolDefinition definitionOf(const app::ToolSection& t) {
  agent::ToolDefinition d;
  d.name = t.name;
  d.description = t.description;
  d.inputSchema = t.inputSchema;
  d.returnsMedia = t.returnsMedia;
  d.requiresApproval = t.requiresApproval;
  d.approvalTimeoutMillis = t.approvalTimeoutMillis;
  d.onApprovalTimeout = t.onApprovalTimeout;
  return d;
}

std::shared_ptr<agent::Tool> buildTool(const app::ToolSection& t, std::size_t index,
                                       const fs::path& folder, ConfigIssues& issues) {
  std::string path = "tools[" + std::to_string(index) + "].command";
  std::optional<std::string> program = resolveProgram(t.command.front(), folder, path, issues);
  if (!program) return nullptr;
  providers::SubprocessToolOptions options;
  options.command = t.command;
  options.command.front() = *program;
  options.workingDirectory = folder.string();
  options.timeoutMillis = t.timeoutMillis;
  options.untrusted = t.untrusted;
  options.env = {t.env.begin(), t.env.end()};
  options.inheritEnv = t.inheritEnv;
  return std::make_shared<providers::SubprocessTool>(definitionOf(t), std::move(options));
}

agent::AgentOptions loopOptions(const app::Config& config, const std::string& modelId) {
  const app::AgentSection& a = *config.agent;
  agent::AgentOptions o;
  o.model = modelId;
  o.system = a.system;
  o.maxTurns = a.maxTurns;
  o.parallelToolCalls = a.parallelToolCalls;
  o.modelInput = agent::modelInputModeFromName(config.execution.journal.modelInput);
  if (a.compaction) {
    o.compaction = agent::CompactionOptions{a.compaction->triggerBytes, a.compaction->keepLastTurns,
                                            a.compaction->model};
  }
  if (a.budget) {
    o.budget = agent::AgentBudget{a.budget->maxTokens, a.budget->maxCostUsd,
                                  a.budget->maxToolCalls, a.budget->onExceeded};
  }
  o.warnTranscriptBytes = a.warnTranscriptBytes;
  o.onWarn = [sink = config.observability.onWarn](std::string_view message) {
    middleware::warn(sink, message);
  };
  return o;
}

}  // namespace

int64_t AgentApp::modelCalls() const { return completions ? completions->load() : 0; }

namespace {

// The files an app's code is made of: the app file, then every file inside its folder that
// the model or a command names, in a stable order.
std::vector<fs::path> codeFilesOf(const fs::path& file, const app::Config& config) {
  const fs::path folder = file.parent_path();
  std::set<fs::path> named;
  auto consider = [&](const std::string& word) {
    if (word.empty() || word.front() == '-') return;
    fs::path candidate = (fs::path(word).is_absolute() ? fs::path(word) : folder / word);
    candidate = candidate.lexically_normal();
    auto inside = candidate.lexically_relative(folder);
    std::error_code ec;
    if (!inside.empty() && *inside.begin() != ".." && fs::is_regular_file(candidate, ec)) {
      named.insert(candidate);
    }
  };
  if (config.model && !config.model->script.empty()) consider(config.model->script);
  for (const auto& t : config.tools) {
    for (const auto& word : t.command) consider(word);
  }
  for (const auto& server : config.mcpServers) {
    consider(server.command);
    for (const auto& word : server.args) consider(word);
  }
  named.erase(file);
  std::vector<fs::path> files{file};
  files.insert(files.end(), named.begin(), named.end());
  return files;
}

}  // namespace

bool changedOnDisk(const AgentApp& app) {
  std::string digest;
  try {
    digest = workflow::filesCodeVersion("app:", app.codeFiles, app.file.parent_path());
  } catch (const NotFoundError&) {
    return true;
  }
  return digest != app.codeVersion;  // the files' digest (a declared version is boot's)
}

AgentApp loadAgentApp(const fs::path& file) {
  registerAgentAppSections();
  std::error_code ec;
  fs::path absolute = fs::weakly_canonical(fs::absolute(file), ec);
  if (ec) absolute = fs::absolute(file).lexically_normal();
  std::shared_ptr<const app::Config> config = app::loadConfigFile(absolute);
  ConfigIssues issues;
  if (!config->agent) {
    issues.push_back({"agent", "missing: " + absolute.string() +
                                   " defines no agent; an agent app needs [agent] with a name "
                                   "and a [model] (see examples/agents/research.toml)"});
    throw app::ConfigValidationError(absolute.string(), std::move(issues));
  }
  fs::path folder = absolute.parent_path();
  AgentApp out;
  out.file = absolute;
  out.config = config;
  out.name = config->agent->name;
  out.defaultPrompt = config->agent->prompt;
  std::shared_ptr<agent::Model> model = buildModel(*config->model, folder, issues);
  for (std::size_t i = 0; i < config->tools.size(); ++i) {
    const app::ToolSection& t = config->tools[i];
    if (model && t.name == model->id()) {
      issues.push_back({"tools[" + std::to_string(i) + "].name",
                        "\"" + t.name + "\" is the model's id (its effect id); rename the tool"});
    }
    if (auto tool = buildTool(t, i, folder, issues)) out.tools.push_back(std::move(tool));
  }
  const auto& compaction = config->agent->compaction;
  if (model && compaction && !compaction->model.empty() && compaction->model != model->id()) {
    issues.push_back({"agent.compaction.model", "\"" + compaction->model +
                                                    "\" is not this app's model; the app's model "
                                                    "is \"" +
                                                    model->id() +
                                                    "\" (leave compaction.model empty to use it)"});
  }
  if (!issues.empty()) throw app::ConfigValidationError(absolute.string(), std::move(issues));
  auto counting = std::make_shared<CountingModel>(std::move(model));
  out.completions = counting->counter();
  out.model = std::move(counting);
  out.options = loopOptions(*config, out.model->id());
  out.codeFiles = codeFilesOf(absolute, *config);
  out.codeVersion = workflow::filesCodeVersion("app:", out.codeFiles, folder);
  for (const auto& tool : out.tools) out.options.tools.push_back(tool->definition());
  return out;
}

namespace {

// The tasks of an app known before it runs: its model and its [[tools]].
void registerModelAndTools(const AgentApp& app, effects::TaskRegistry& tasks) {
  agent::registerModel(tasks, app.model);
  for (const auto& tool : app.tools) agent::registerTool(tasks, tool);
}

// What boot checks with the app's registry (validateConfig with its tasks), before any run:
// the tools of [[tools.mcp]] servers are known only once a run starts them, so an id that is
// none of the others is a note here (boot refuses it when no server lists it either).
app::ConfigCheck checkAgainstTasks(const AgentApp& loaded) {
  effects::TaskRegistry tasks;
  registerModelAndTools(loaded, tasks);
  bool moreToolsAtRun = !loaded.config->mcpServers.empty();
  ConfigIssues issues = app::validateConfig(*loaded.config, {&tasks, moreToolsAtRun});
  if (!issues.empty()) {
    return app::ConfigCheck::failed(
        app::ConfigValidationError(loaded.file.string(), std::move(issues)));
  }
  std::string notes;
  if (moreToolsAtRun && loaded.config->execution.claimCheck) {
    for (const auto& id :
         middleware::unregisteredToolIds(*loaded.config->execution.claimCheck, tasks)) {
      notes += "note: execution.claimCheck.toolIds: '" + id +
               "' is no [[tools]] entry; `loom run` refuses it unless an MCP server lists it\n";
    }
  }
  return {true, notes, {}};
}

}  // namespace

void registerAgentApp(AgentApp& app, workflow::WorkflowRegistry& workflows,
                      effects::TaskRegistry& tasks) {
  if (workflows.find(app.name) != nullptr) {
    throw AlreadyExistsError("agent.name \"" + app.name + "\" of " + app.file.string() +
                             " is also a workflow this program registers; rename the agent");
  }
  app::markSecretVariables(*app.config);  // the MCP servers below must not inherit them
  registerModelAndTools(app, tasks);
  for (const app::McpServerSection& server : app.config->mcpServers) {
    providers::McpServerOptions options;
    options.name = server.name;
    options.command = server.command;
    options.args = server.args;
    options.env = {server.env.begin(), server.env.end()};
    options.inheritEnv = server.inheritEnv;
    options.workingDirectory = (app.file.parent_path() / server.workingDirectory).string();
    options.timeoutMillis = server.timeoutMillis;
    auto client = providers::registerMcpServer(tasks, std::move(options));
    for (const auto& definition : client->toolDefinitions()) {
      app.options.tools.push_back(definition);
    }
    app.mcpServers.push_back(std::move(client));
  }
  agent::registerAgentWorkflow(workflows, app.name, app.options);
}

json::value agentAppInput(const AgentApp& app, json::value prompt) {
  return json::object{{kPromptInputKey, std::move(prompt)}, {kAppInputKey, app.file.string()}};
}

std::optional<fs::path> agentAppFileOf(const json::value& input) {
  const auto* o = input.if_object();
  const auto* file = o ? o->if_contains(kAppInputKey) : nullptr;
  if (file == nullptr || !file->is_string() || file->get_string().empty()) return std::nullopt;
  return fs::path(std::string(file->get_string()));
}

bool isAgentAppPath(std::string_view argument) {
  return argument.size() > 5 && argument.substr(argument.size() - 5) == ".toml";
}

app::ConfigCheck checkAppConfigFile(const fs::path& file) {
  registerAgentAppSections();
  app::ConfigCheck check = app::checkConfigFile(file);
  if (!check.ok) return check;
  std::shared_ptr<const app::Config> config = app::loadConfigFile(file);
  if (!config->agent) return check;
  try {
    AgentApp loaded = loadAgentApp(file);
    app::ConfigCheck withTasks = checkAgainstTasks(loaded);
    if (!withTasks.ok) return withTasks;
    check.text += withTasks.text;
    check.text += "agent app: \"" + loaded.name + "\", model \"" + loaded.model->id() + "\", " +
                  std::to_string(loaded.tools.size()) + " tool(s), " +
                  std::to_string(loaded.config->mcpServers.size()) +
                  " MCP server(s) (started by a run); run it with `loom run " + file.string() +
                  "`\n";
  } catch (const ConfigError& e) {
    return app::ConfigCheck::failed(e);  // the problems are the answer
  }
  return check;
}

}  // namespace loom::agent_app
