// The agent app sections of a loom.toml ([agent], [model], [[tools]], [[tools.mcp]]): what
// they load into Config, and every problem they can have, each named by its option path.
#include <gtest/gtest.h>

#include "agent_app/agent_app_option_rows.h"
#include "loom/agent_app/agent_app.h"
#include "loom/app/config_file.h"
#include "support/recording_middleware.h"

namespace loom::agent_app {
namespace {

// The sections join the option table before any test reads it.
const bool kSectionsAdded = (registerAgentAppSections(), true);

ConfigIssues issuesOf(std::string_view toml) {
  try {
    parseConfigToml(toml, "app.toml");
  } catch (const ConfigValidationError& e) {
    return e.issues();
  }
  return {};
}

// `toml` has a problem at `path` whose message contains `text`.
void expectIssue(std::string_view toml, std::string_view path, std::string_view text) {
  ConfigIssues issues = issuesOf(toml);
  bool found = false;
  for (const auto& issue : issues) {
    if (issue.path == path && issue.message.find(text) != std::string::npos) found = true;
  }
  EXPECT_TRUE(found) << "no problem at " << path << " saying \"" << text << "\" in\n"
                     << toml << "\ngot:\n"
                     << middleware::formatIssues(issues);
}

constexpr std::string_view kMinimal = R"(
[agent]
name = "research"
[model]
script = "scripts/research.json"
)";

TEST(AgentAppOptions, LoadIntoConfig) {
  auto config = parseConfigToml(R"(
[agent]
name = "research"
prompt = "Summarize."
system = "Be brief."
maxTurns = 12
warnTranscriptBytes = 400_000
compaction = { triggerBytes = 100_000, keepLastTurns = 3 }

[model]
kind = "scripted"
script = "scripts/research.json"

[[tools]]
name = "fetch_report"
description = "Fetches a page."
command = ["tools/fetch_report", "--delay", "0.1"]
timeoutMillis = 5000
untrusted = true
requiresApproval = true
inputSchema = { type = "object", properties = { page = { type = "integer" } } }

[[tools]]
name = "search"
command = ["search"]

[execution.journal]
modelInput = "full"
)",
                                "app.toml");
  ASSERT_TRUE(config->agent);
  EXPECT_EQ(config->agent->name, "research");
  EXPECT_EQ(config->agent->prompt, "Summarize.");
  EXPECT_EQ(config->agent->system, "Be brief.");
  EXPECT_EQ(config->agent->maxTurns, 12);
  EXPECT_EQ(config->agent->warnTranscriptBytes, 400'000);
  ASSERT_TRUE(config->agent->compaction);
  EXPECT_EQ(config->agent->compaction->triggerBytes, 100'000);
  EXPECT_EQ(config->agent->compaction->keepLastTurns, 3);
  ASSERT_TRUE(config->model);
  EXPECT_EQ(config->model->script, "scripts/research.json");
  ASSERT_EQ(config->tools.size(), 2u);
  const ToolSection& t = config->tools[0];
  EXPECT_EQ(t.name, "fetch_report");
  EXPECT_EQ(t.description, "Fetches a page.");
  EXPECT_EQ(t.command, (std::vector<std::string>{"tools/fetch_report", "--delay", "0.1"}));
  EXPECT_EQ(t.timeoutMillis, 5000);
  EXPECT_TRUE(t.untrusted);
  EXPECT_TRUE(t.requiresApproval);
  EXPECT_FALSE(t.returnsMedia);
  EXPECT_EQ(
      t.inputSchema,
      json::parse(R"({"type":"object","properties":{"page":{"type":"integer"}}})", "expected"));
  EXPECT_TRUE(config->tools[1].inputSchema.is_null());
  EXPECT_EQ(config->tools[1].timeoutMillis, 30'000);
  EXPECT_EQ(config->execution.journal.modelInput, "full");
}

TEST(AgentAppOptions, AFileWithoutAnAgentHasNoneAndDescribesNone) {
  auto config = parseConfigToml("[storage]\nhome = \"h\"\n", "loom.toml");
  EXPECT_FALSE(config->agent);
  EXPECT_FALSE(config->model);
  EXPECT_EQ(describeConfig(*config).find("agent."), std::string::npos);
  EXPECT_EQ(describeConfig(*config).find("model."), std::string::npos);
  auto app = parseConfigToml(kMinimal, "app.toml");
  std::string described = describeConfig(*app);
  EXPECT_NE(described.find("agent.name = \"research\""), std::string::npos) << described;
  EXPECT_NE(described.find("agent.maxTurns = 50"), std::string::npos) << described;
  EXPECT_EQ(described.find("model.baseUrl"), std::string::npos) << "openai only: " << described;
}

TEST(AgentAppOptions, UnknownKeysAndFlatSpellingsNameTheirPaths) {
  expectIssue(std::string(kMinimal) + "[agent.compaction]\ntriggerBytes = 1\nkeep = 2\n",
              "agent.compaction.keep", "agent.compaction accepts triggerBytes");
  expectIssue("[agent]\nname = \"a\"\nnme = \"x\"\n[model]\nscript = \"s.json\"\n", "agent.nme",
              "agent accepts name, prompt");
  expectIssue(std::string(kMinimal) + "maxTurns = 3\n", "model.maxTurns",
              "did you mean agent.maxTurns");
  expectIssue("maxTurns = 3\n", "maxTurns", "write it as agent.maxTurns");
  expectIssue(std::string("claimCheck = { toolIds = [\"x\"] }\n") + std::string(kMinimal),
              "claimCheck", "execution.claimCheck");
}

TEST(AgentAppOptions, FlatKeysOfTheAgentSectionsNameTheirSection) {
  for (std::string key : {"prompt", "system", "warnTranscriptBytes", "script"}) {
    ConfigIssues issues = issuesOf(key + " = 1\n");
    ASSERT_EQ(issues.size(), 1u) << key;
    EXPECT_NE(issues[0].message.find("write it as "), std::string::npos) << issues[0].message;
  }
  expectIssue("triggerBytes = 1\n", "triggerBytes", "write it as agent.compaction.triggerBytes");
  expectIssue("script = \"s.json\"\n", "script", "write it as model.script");
}

TEST(AgentAppOptions, RequiredPartsOfAnAgentApp) {
  expectIssue("[agent]\nprompt = \"p\"\n[model]\nscript = \"s.json\"\n", "agent.name", "missing");
  expectIssue("[agent]\nname = \"a#b\"\n[model]\nscript = \"s.json\"\n", "agent.name",
              "not a valid name");
  expectIssue("[model]\nscript = \"s.json\"\n", "agent", "needs an [agent] table");
  expectIssue("[agent]\nname = \"a\"\n", "model", "needs a [model] table");
  expectIssue("[agent]\nname = \"a\"\n[model]\nkind = \"scripted\"\n", "model.script", "missing");
  expectIssue(std::string(kMinimal) + "[agent.compaction]\nkeepLastTurns = 1\n",
              "agent.compaction.triggerBytes", "missing");
  expectIssue("[agent]\nname = \"a\"\nmaxTurns = 0\n[model]\nscript = \"s.json\"\n",
              "agent.maxTurns", "expected an integer from 1");
}

TEST(AgentAppOptions, ToolProblems) {
  std::string app(kMinimal);
  expectIssue(app + "[[tools]]\ncommand = [\"x\"]\n", "tools[0].name", "missing");
  expectIssue(app + "[[tools]]\nname = \"fetch report\"\ncommand = [\"x\"]\n", "tools[0].name",
              "not a valid name");
  expectIssue(app + "[[tools]]\nname = \"t\"\n", "tools[0].command", "missing");
  expectIssue(app + "[[tools]]\nname = \"t\"\ncommand = \"x\"\n", "tools[0].command",
              "expected an array of strings");
  expectIssue(app +
                  "[[tools]]\nname = \"t\"\ncommand = [\"x\"]\n[[tools]]\nname = \"t\"\n"
                  "command = [\"y\"]\n",
              "tools[1].name", "name of an earlier tool");
  expectIssue(app + "[[tools]]\nname = \"t\"\ncommand = [\"x\"]\ninputSchema = \"object\"\n",
              "tools[0].inputSchema", "expected an inline table");
  expectIssue(app + "[[tools]]\nname = \"t\"\ncommand = [\"x\"]\ntimeoutMillis = 0\n",
              "tools[0].timeoutMillis", "expected an integer from 1");
  expectIssue(app + "[[tools]]\nname = \"t\"\ncommand = [\"x\"]\ncolour = 1\n", "tools[0].colour",
              "expected one of name, description, command");
}

TEST(AgentAppOptions, OptionsOfLaterWorkAreRefused) {
  std::string app(kMinimal);
  if (!kMcpToolsWired) {
    expectIssue(app + "[[tools.mcp]]\nname = \"files\"\ncommand = \"npx\"\n", "tools.mcp",
                "not supported by this build yet");
    expectIssue(app +
                    "[[tools]]\nname = \"t\"\ncommand = [\"x\"]\n[[tools.mcp]]\nname = "
                    "\"files\"\ncommand = \"npx\"\n",
                "tools[0].mcp", "not supported by this build yet");
  }
  if (!kOpenAiModelWired) {
    expectIssue("[agent]\nname = \"a\"\n[model]\nkind = \"openai\"\n", "model.kind",
                "not supported by this build yet");
    expectIssue(app + "baseUrl = \"http://127.0.0.1:8080/v1\"\n", "model.baseUrl",
                "not supported by this build yet");
  }
}

TEST(AgentAppOptions, McpServersLoadWhereverTomlPutsThem) {
  if (!kMcpToolsWired) GTEST_SKIP() << "[[tools.mcp]] is not wired in this build";
  // After a [[tools]] entry TOML nests the server in it; alone, `tools` is a table.
  auto nested = parseConfigToml(std::string(kMinimal) + R"(
[[tools]]
name = "fetch_report"
command = ["tools/fetch_report"]

[[tools.mcp]]
name = "files"
command = "npx"
args = ["@modelcontextprotocol/server-filesystem", "./data"]
env = { DEBUG = "1" }
)",
                                "app.toml");
  ASSERT_EQ(nested->tools.size(), 1u);
  ASSERT_EQ(nested->mcpServers.size(), 1u);
  EXPECT_EQ(nested->mcpServers[0].name, "files");
  EXPECT_EQ(nested->mcpServers[0].command, "npx");
  EXPECT_EQ(nested->mcpServers[0].args.size(), 2u);
  ASSERT_EQ(nested->mcpServers[0].env.size(), 1u);
  EXPECT_EQ(nested->mcpServers[0].env[0], (std::pair<std::string, std::string>{"DEBUG", "1"}));
  auto alone = parseConfigToml(std::string(kMinimal) +
                                   "[[tools.mcp]]\nname = \"files\"\n"
                                   "command = \"npx\"\n",
                               "app.toml");
  EXPECT_TRUE(alone->tools.empty());
  ASSERT_EQ(alone->mcpServers.size(), 1u);
  expectIssue(std::string(kMinimal) + "[[tools.mcp]]\nname = \"files\"\n", "tools.mcp[0].command",
              "missing");
  expectIssue(std::string(kMinimal) +
                  "[[tools.mcp]]\nname = \"f\"\ncommand = \"x\"\n"
                  "env = { N = 1 }\n",
              "tools.mcp[0].env.N", "expected a string");
}

TEST(AgentAppOptions, AnOpenAiModelNeedsItsServerAndName) {
  if (!kOpenAiModelWired) GTEST_SKIP() << "kind = \"openai\" is not wired in this build";
  std::string agent = "[agent]\nname = \"a\"\n[model]\nkind = \"openai\"\n";
  expectIssue(agent, "model.baseUrl", "missing");
  expectIssue(agent, "model.model", "missing");
  auto config = parseConfigToml(agent +
                                    "baseUrl = \"http://127.0.0.1:8080/v1\"\n"
                                    "model = \"qwen2.5:7b\"\napiKeyEnv = \"\"\n",
                                "app.toml");
  EXPECT_EQ(config->model->baseUrl, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(config->model->apiKeyEnv, "");
  EXPECT_NE(describeConfig(*config).find("model.baseUrl = "), std::string::npos);
}

TEST(AgentAppOptions, CppConfigsAreValidatedToo) {
  Config config;
  config.agent.emplace().name = "a";
  config.model.emplace().script = "s.json";
  ToolSection tool;
  tool.name = "t";
  tool.command = {"x"};
  config.tools = {tool, tool};
  try {
    defineConfig(config);
    FAIL() << "a duplicate tool name was accepted";
  } catch (const ConfigValidationError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "tools[1].name");
  }
}

}  // namespace
}  // namespace loom::agent_app
