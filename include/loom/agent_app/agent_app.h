// Agent apps: a durable tool-calling agent defined in a loom.toml file ([agent], [model],
// [[tools]], plus any config group; docs/config.md) and run by `loom run app.toml`
// (examples/agents/). loadAgentApp reads and validates the file, resolves the model script
// and the tool commands against the file's folder, and builds the model and the tools;
// registerAgentApp adds them and the agent's workflow (named agent.name) to the registries,
// which then go to app::boot with the app's config. An agent app's execution records the app
// file's absolute path in its input, {"prompt": ..., "app": "/abs/app.toml"}, so a later
// `loom resume` or `loom signal` in a fresh process loads the same app again
// (docs/adr/0002-agent-apps-resume.md). Loading is not thread-safe; a loaded app's model and
// tools are (one model serves many executions at once).
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/agent/agent_loop.h"
#include "loom/agent/model.h"
#include "loom/agent/tool.h"
#include "loom/app/config.h"
#include "loom/app/config_file.h"
#include "loom/effects/task.h"
#include "loom/json/json.h"
#include "loom/providers/mcp_client.h"
#include "loom/workflow/workflow.h"

namespace loom::agent_app {

// The input key of an agent app's execution that names its app file.
inline constexpr std::string_view kAppInputKey = "app";
inline constexpr std::string_view kPromptInputKey = "prompt";

struct AgentApp {
  std::filesystem::path file;                 // absolute, normalized
  std::shared_ptr<const app::Config> config;  // every section of the file, validated
  std::string name;                           // agent.name: the loop's and workflow's name
  std::string defaultPrompt;                  // agent.prompt ("" when unset)
  // The loop's options: the model's id, the tools, the limits, execution.journal.modelInput
  // and the state-growth warning sink (observability.onWarn, else stderr).
  agent::AgentOptions options;
  std::shared_ptr<agent::Model> model;
  std::vector<std::shared_ptr<agent::Tool>> tools;  // the [[tools]] (subprocess tools)
  // The [[tools.mcp]] servers, started by registerAgentApp (their tools are then in
  // options.tools); each stops when the last reference goes.
  std::vector<std::shared_ptr<providers::McpClient>> mcpServers;
  // The code of this app (workflow/code_version.h): "app:" and a digest of the app file and
  // of every file inside its folder it names (model.script, and each [[tools]] or
  // [[tools.mcp]] command or argument that is a file there). Editing any of them makes a new
  // version; a run started on another is not continued on it (execution.versioning).
  std::string codeVersion;
  // The files that digest covers, the app file first (what a long-lived host reads again to
  // find the app changed on disk: agent_app::changedOnDisk).
  std::vector<std::filesystem::path> codeFiles;
  // How many completions `model` produced; shared with the model, which counts them.
  std::shared_ptr<const std::atomic<int64_t>> completions;

  // Model completions this process asked for (turns and compaction summaries); replayed
  // steps do not call the model, so after a resume this is what ran again.
  int64_t modelCalls() const;
};

// Loads the app file at `file`. Throws app::ConfigValidationError listing every problem at
// once, each with its option path: what loadConfigFile reports, then what needs the file's
// folder or environment (a model script that is missing or not a valid script, an openai
// model whose API key variable is unset, a tool command that does not exist or is not
// executable, agent.compaction.model naming another model, a tool that takes the model's
// id). Reads files and the environment; starts no process, opens no store or connection.
AgentApp loadAgentApp(const std::filesystem::path& file);

// True when the files `app` was loaded from are not what they were (edited, or gone): a host
// that keeps a loaded app (a worker) loads it again, so no run continues on a mix of the
// loaded app and the files now on disk.
bool changedOnDisk(const AgentApp& app);

// Adds the agent-app sections ([agent], [model], [[tools]], [[tools.mcp]]) to the option
// table, so app::loadConfigFile, describeConfig and docs/config.md know them (idempotent).
// loadAgentApp, checkAppConfigFile and the loom command line call it; a program that reads
// such a file with app::loadConfigFile itself calls it first, from its main thread.
void registerAgentAppSections();

// Registers the app's model and tools as tasks, starts its [[tools.mcp]] servers and registers
// their tools (adding them to app.options.tools), and registers its agent loop as the workflow
// `app.name`. Throws AlreadyExistsError when a name is taken (a workflow or task of the
// program with the agent's or a tool's name, two servers listing one tool name), and what
// providers::registerMcpServer throws when a server cannot be started. Call before boot; the
// registries must outlive the runtime, and `app` must outlive both (its model, tools and
// servers are shared with them).
void registerAgentApp(AgentApp& app, workflow::WorkflowRegistry& workflows,
                      effects::TaskRegistry& tasks);

// The input of a new execution of `app`: {"prompt": prompt, "app": app.file}.
json::value agentAppInput(const AgentApp& app, json::value prompt);

// The app file an execution's input names, nullopt when the input is not an agent app's.
std::optional<std::filesystem::path> agentAppFileOf(const json::value& input);

// True when a `loom run` argument names an app file rather than a workflow (it ends in
// ".toml").
bool isAgentAppPath(std::string_view argument);

// What `loom config check <file>` prints for any loom.toml: checkConfigFile's answer, and for
// a file with an agent app also the problems loadAgentApp finds and those boot finds with the
// app's model and [[tools]] registered (app::validateConfig with its tasks: a
// execution.claimCheck.toolIds entry naming the model or no tool). An app with [[tools.mcp]]
// servers, whose tools are known only once a run starts them, gets a note for an id that is
// none of its [[tools]] instead. Starts nothing. Never throws a ConfigError.
app::ConfigCheck checkAppConfigFile(const std::filesystem::path& file);

}  // namespace loom::agent_app
