// The option rows of an agent app's sections ([agent], [model], [[tools]], [[tools.mcp]];
// `loom run app.toml`), appended to the one option table (options.cc) after the groups, and
// the checks the table cannot express (required keys of a present section, unique tool
// names, what a model kind needs). They live with the agent app and join app's one option
// table as a section (app::addOptionSection; registerAgentAppSections). Internal to
// loom_agent_app.
#pragma once

#include <string>
#include <vector>

#include "app/options.h"

namespace loom::agent_app {

// The rows extend app's option table with app's own types.
using namespace loom::app;  // NOLINT(google-build-using-namespace): private to this module

// Whether this build wires `model.kind = "openai"` and `[[tools.mcp]]`; when false their
// rows are Support::kNotYet and setting them is a ConfigError.
inline constexpr bool kOpenAiModelWired = true;
inline constexpr bool kMcpToolsWired = true;

void addAgentAppRows(std::vector<OptionRow>& rows);

// Shared by the two files of these rows (agent_app_option_rows.cc: [agent] and [model];
// agent_tool_option_rows.cc: [[tools]] and [[tools.mcp]]).
OptionRow& addAgentAppRow(std::vector<OptionRow>& rows, std::string path, OptionType type,
                          std::string description, std::string defaultText = "");
// What is wrong with an agent's name (dots allowed) or a tool's (not); "" when nothing.
std::string agentAppNameProblem(const std::string& name, bool dotAllowed);
void addToolRows(std::vector<OptionRow>& rows);
void addBudgetRows(std::vector<OptionRow>& rows);  // agent_budget_option_rows.cc
// The tools' and MCP servers' part of validateAgentApp.
void validateTools(const Config& config, ConfigIssues& issues);

// Appends what is wrong with the agent app sections of `config` (nothing when it has none):
// a section without [agent], an agent without a name or a model, a scripted model without a
// script, a tool without a name or command, two tools of one name, ...
void validateAgentApp(const Config& config, ConfigIssues& issues);

}  // namespace loom::agent_app
