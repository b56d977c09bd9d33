// Agent apps in-process: loading the shipped examples, what needs the app file's folder
// (script, tool commands) and its errors, registering and running an app on a memory store.
#include "loom/agent_app/agent_app.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "loom/kernel/memory_event_store.h"
#include "loom/workflow/runtime.h"
#include "support/temp_dir.h"

namespace loom::agent_app {

using loom::testing::TempDir;
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = fs::path(LOOM_SOURCE_DIR) / "examples" / "agents";

// The app file's problems (loadAgentApp's ConfigValidationError), as "path: message" lines.
std::string problemsOf(const fs::path& file) {
  try {
    loadAgentApp(file);
  } catch (const app::ConfigValidationError& e) {
    std::string out;
    for (const auto& i : e.issues()) out += i.path + ": " + i.message + "\n";
    return out;
  }
  return "";
}

std::string appText(const std::string& tools, const std::string& script = "script.json") {
  return "[agent]\nname = \"a\"\nprompt = \"go\"\n[model]\nscript = \"" + script + "\"\n" + tools;
}

constexpr std::string_view kTwoTurns =
    R"({"turns": [{"toolCalls": [{"name": "fetch_report", "arguments": {"page": 3}}]},
                  {"answer": "done"}]})";

TEST(AgentApp, LoadsTheResearchExample) {
  AgentApp app = loadAgentApp(kExamples / "research.toml");
  EXPECT_TRUE(app.file.is_absolute());
  EXPECT_EQ(app.file.filename(), "research.toml");
  EXPECT_EQ(app.name, "research");
  EXPECT_FALSE(app.defaultPrompt.empty());
  EXPECT_EQ(app.model->id(), "scripted");
  EXPECT_EQ(app.options.model, "scripted");
  EXPECT_EQ(app.options.maxTurns, 20);
  EXPECT_EQ(app.options.warnTranscriptBytes, 400'000);
  EXPECT_TRUE(app.options.onWarn) << "warnings go to stderr when observability.onWarn is unset";
  EXPECT_EQ(app.options.modelInput, agent::ModelInputMode::kDelta);
  ASSERT_EQ(app.options.tools.size(), 2u);
  EXPECT_EQ(app.options.tools[0].name, "search");
  EXPECT_EQ(app.options.tools[1].name, "fetch_report");
  EXPECT_TRUE(app.options.tools[1].inputSchema.is_object());
  EXPECT_EQ(app.modelCalls(), 0);
  AgentApp longRun = loadAgentApp(kExamples / "long-run.toml");
  EXPECT_EQ(longRun.name, "long-run");
}

TEST(AgentApp, RunsOnAMemoryStoreAndRecordsItsFileInTheInput) {
  TempDir dir;
  dir.write("script.json", std::string(kTwoTurns));
  fs::path file =
      dir.write("app.toml", appText("[[tools]]\nname = \"fetch_report\"\ncommand = [\"" +
                                    (kExamples / "tools" / "fetch_report").string() + "\"]\n"));
  AgentApp app = loadAgentApp(file);
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  registerAgentApp(app, workflows, tasks);
  ASSERT_NE(tasks.find("fetch_report"), nullptr);
  EXPECT_EQ(tasks.find("fetch_report")->definition.kind, "tool");
  EXPECT_EQ(tasks.find("scripted")->definition.kind, "llm");
  kernel::MemoryEventStore store;
  workflow::WorkflowRuntime runtime(store, workflows, tasks, nullptr);
  json::value input = agentAppInput(app, json::value("go"));
  EXPECT_EQ(agentAppFileOf(input), app.file);
  auto r = runtime.start("a", input, {.id = "x"});
  ASSERT_EQ(r.status, kernel::ExecutionStatus::kCompleted) << json::toText(r.error);
  EXPECT_EQ(r.output.at("answer"), "done");
  EXPECT_EQ(app.modelCalls(), 2);
  auto events = store.read("x");
  const auto& page = events[2].data.at("output");
  EXPECT_EQ(page.at("page"), 3);
  std::size_t bytes = json::textBytes(page);
  EXPECT_GE(bytes, 1500u);
  EXPECT_LE(bytes, 4000u);
  EXPECT_THROW(registerAgentApp(app, workflows, tasks), AlreadyExistsError);
}

TEST(AgentApp, ProblemsThatNeedTheFilesFolderNameTheirPaths) {
  TempDir dir;
  dir.write("script.json", std::string(kTwoTurns));
  dir.write("bad.json", R"({"turns": [{"say": "hi"}]})");
  dir.write("tools/plain", "#!/bin/sh\necho '{}'\n");
  std::string problems = problemsOf(dir.write("a.toml", appText("", "missing.json")));
  EXPECT_NE(problems.find("model.script: no such file " + (dir.path() / "missing.json").string()),
            std::string::npos)
      << problems;
  problems = problemsOf(dir.write("b.toml", appText("", "bad.json")));
  EXPECT_NE(problems.find("model.script: "), std::string::npos) << problems;
  EXPECT_NE(problems.find("not a valid model script"), std::string::npos) << problems;
  problems = problemsOf(
      dir.write("c.toml", appText("[[tools]]\nname = \"t\"\ncommand = [\"tools/nope\"]\n"
                                  "[[tools]]\nname = \"u\"\ncommand = [\"tools/plain\"]\n"
                                  "[[tools]]\nname = \"v\"\ncommand = [\"no-such-program-xyz\"]\n"
                                  "[[tools]]\nname = \"scripted\"\ncommand = [\"sh\"]\n")));
  EXPECT_NE(problems.find("tools[0].command: no such program " +
                          (dir.path() / "tools" / "nope").string()),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("tools[1].command: "), std::string::npos) << problems;
  EXPECT_NE(problems.find("chmod +x"), std::string::npos) << problems;
  EXPECT_NE(problems.find("tools[2].command: no program \"no-such-program-xyz\" on PATH"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("tools[3].name: \"scripted\" is the model's id"), std::string::npos)
      << problems;
  problems = problemsOf(
      dir.write("d.toml", appText("[agent.compaction]\ntriggerBytes = 1000\nmodel = \"other\"\n")));
  EXPECT_NE(problems.find("agent.compaction.model: \"other\" is not this app's model"),
            std::string::npos)
      << problems;
  problems = problemsOf(dir.write("e.toml", "[storage]\nhome = \"h\"\n"));
  EXPECT_NE(problems.find("agent: missing"), std::string::npos) << problems;
  problems = problemsOf(dir.path() / "absent.toml");
  EXPECT_NE(problems.find("no such file"), std::string::npos) << problems;
}

TEST(AgentApp, AnOpenAiModelIsBuiltFromItsSection) {
  TempDir dir;
  std::string openai =
      "[agent]\nname = \"a\"\nprompt = \"go\"\n[model]\nkind = \"openai\"\n"
      "baseUrl = \"http://127.0.0.1:9/v1\"\nmodel = \"tiny\"\n";
  std::string problems =
      problemsOf(dir.write("unset.toml", openai + "apiKeyEnv = \"LOOM_TEST_SURELY_UNSET_KEY\"\n"));
  EXPECT_NE(problems.find("model.apiKeyEnv: "), std::string::npos) << problems;
  EXPECT_NE(problems.find("LOOM_TEST_SURELY_UNSET_KEY"), std::string::npos) << problems;
  AgentApp app = loadAgentApp(dir.write("local.toml", openai + "apiKeyEnv = \"\"\n"));
  EXPECT_EQ(app.model->id(), "openai:tiny");
  EXPECT_EQ(app.options.model, "openai:tiny");
}

TEST(AgentApp, ConfigCheckOfAnAppFile) {
  app::ConfigCheck ok = checkAppConfigFile(kExamples / "research.toml");
  EXPECT_TRUE(ok.ok) << ok.text;
  EXPECT_NE(ok.text.find("agent.name = \"research\""), std::string::npos) << ok.text;
  EXPECT_NE(ok.text.find("agent app: \"research\", model \"scripted\", 2 tool(s)"),
            std::string::npos)
      << ok.text;
  TempDir dir;
  app::ConfigCheck bad = checkAppConfigFile(dir.write("a.toml", appText("")));
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.text.find("model.script: no such file"), std::string::npos) << bad.text;
  dir.write("script.json", std::string(kTwoTurns));
  std::string tool = "[[tools]]\nname = \"fetch_report\"\ncommand = [\"" +
                     (kExamples / "tools" / "fetch_report").string() + "\"]\n";
  app::ConfigCheck typo = checkAppConfigFile(dir.write(
      "typo.toml", appText(tool + "[execution.claimCheck]\ntoolIds = [\"fetch_reprot\"]\n")));
  EXPECT_FALSE(typo.ok);
  EXPECT_NE(typo.text.find("execution.claimCheck.toolIds: 'fetch_reprot' is no tool of this app"),
            std::string::npos)
      << typo.text;
  // An MCP server's tools are known only at run: the id is a note, not a problem.
  app::ConfigCheck mcp = checkAppConfigFile(
      dir.write("mcp.toml", appText(tool + "[[tools.mcp]]\nname = \"notes\"\ncommand = \"sh\"\n"
                                           "[execution.claimCheck]\ntoolIds = [\"lookup\"]\n")));
  EXPECT_TRUE(mcp.ok) << mcp.text;
  EXPECT_NE(mcp.text.find("note: execution.claimCheck.toolIds: 'lookup' is no [[tools]] entry"),
            std::string::npos)
      << mcp.text;
  app::ConfigCheck plain = checkAppConfigFile(dir.write("loom.toml", "[storage]\nhome = \"h\"\n"));
  EXPECT_TRUE(plain.ok) << plain.text;
  EXPECT_EQ(plain.text.find("agent app"), std::string::npos) << plain.text;
}

TEST(AgentApp, InputAndPathHelpers) {
  EXPECT_TRUE(isAgentAppPath("examples/agents/research.toml"));
  EXPECT_FALSE(isAgentAppPath("example.steps"));
  EXPECT_FALSE(isAgentAppPath(".toml"));
  EXPECT_FALSE(agentAppFileOf(json::value(nullptr)));
  EXPECT_FALSE(agentAppFileOf(json::parse(R"({"steps": 3})", "input")));
  EXPECT_EQ(agentAppFileOf(json::parse(R"({"prompt": "p", "app": "/a/b.toml"})", "input")),
            fs::path("/a/b.toml"));
}

}  // namespace
}  // namespace loom::agent_app
