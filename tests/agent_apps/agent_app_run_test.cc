// `loom run app.toml` end to end: the exact steps of an agent app's run, its recorded input,
// its folded agent state, approval through `loom signal`, the state-growth warning, and the
// config and usage errors of app files with their paths and exit codes.
#include <filesystem>

#include "agent_apps/agent_app_fixture.h"

namespace loom::testing {
namespace {

TEST_F(AgentAppTest, StepIdsTaskKindsAndInputOfARun) {
  std::string app = writeApp(
      R"({"turns": [
            {"toolCalls": [{"name": "fetch_report", "arguments": {"page": 1}},
                           {"name": "search", "arguments": {"query": "churn"}}]},
            {"toolCalls": [{"name": "fetch_report", "arguments": {"page": 2}}]},
            {"answer": "done"}]})",
      fetchReportTool() + "[[tools]]\nname = \"search\"\ncommand = [\"" + exampleTool("search") +
          "\"]\n");
  Outcome run = loom({"run", app, "--id", "r", "--prompt", "Go.", "--json"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  json::value result = run.json();
  EXPECT_EQ(result.at("status"), "completed");
  EXPECT_EQ(result.at("output"),
            json::parse(R"({"outcome":"answered","answer":"done","turns":3})", "expected"));
  EXPECT_EQ(result.at("modelCalls"), 3);

  std::vector<std::string> steps;
  json::array log = events("r");
  for (const auto& e : log) {
    std::string line(e.at("type").as_string());
    if (e.at("type") == "STEP_COMPLETED") {
      line += " " + std::string(e.at("stepId").as_string()) + " " +
              std::string(e.at("taskKind").as_string()) + " " +
              std::string(e.at("effectId").as_string());
    }
    steps.push_back(line);
  }
  EXPECT_EQ(steps, (std::vector<std::string>{
                       "EXECUTION_STARTED",
                       "STEP_COMPLETED research#turn:1:model llm scripted",
                       "STEP_COMPLETED research#turn:1:tool:0 tool fetch_report",
                       "STEP_COMPLETED research#turn:1:tool:1 tool search",
                       "STEP_COMPLETED research#turn:2:model llm scripted",
                       "STEP_COMPLETED research#turn:2:tool:0 tool fetch_report",
                       "STEP_COMPLETED research#turn:3:model llm scripted",
                       "EXECUTION_COMPLETED",
                   }));
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log[0].at("workflow"), "research");
  EXPECT_EQ(log[0].at("input").at("prompt"), "Go.");
  EXPECT_EQ(log[0].at("input").at("app").as_string(), std::filesystem::canonical(app).string());
  EXPECT_EQ(log[4].at("input").at("since"), "research#turn:1:model") << "delta journaling";

  Outcome state = loom({"state", "r", "--json"});
  ASSERT_EQ(state.exitCode, 0) << state.err;
  json::value folded = state.json();
  ASSERT_EQ(folded.at("loops").as_array().size(), 1u);
  const auto& loop = folded.at("loops").at(0);
  EXPECT_EQ(loop.at("loop"), "research");
  EXPECT_EQ(loop.at("state").at("frames").as_array().size(), 3u);
  EXPECT_EQ(loop.at("stateBytes").to_number<int64_t>(),
            static_cast<int64_t>(json::textBytes(loop.at("state"))));
  Outcome kernelState = loom({"state", "r", "--kernel", "--json"});
  ASSERT_EQ(kernelState.exitCode, 0) << kernelState.err;
  EXPECT_EQ(kernelState.json().at("workflow"), "research");
  Outcome human = loom({"state", "r"});
  EXPECT_EQ(json::parse(human.out, "loom state").at("loops").at(0).at("stateBytes"),
            loop.at("stateBytes"))
      << "without --json: the same JSON, indented, and nothing else on stdout: " << human.out;
  EXPECT_NE(human.out.find("\n  "), std::string::npos) << "indented";

  Outcome listed = loom({"ls", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  EXPECT_EQ(listed.json().at(0).at("workflow"), "research");
  EXPECT_EQ(listed.json().at(0).at("steps"), 6) << "ls keeps the kernel's numbers";
}

TEST_F(AgentAppTest, PromptComesFromTheFileOrTheInput) {
  std::string app = writeApp(fetchPagesScript(0), fetchReportTool());
  ASSERT_EQ(loom({"run", app, "--id", "a"}).exitCode, 0);
  EXPECT_EQ(events("a")[0].at("input").at("prompt"), "Read the report.");
  ASSERT_EQ(loom({"run", app, "--id", "b", "--input", R"({"prompt": {"task": "x"}})"}).exitCode, 0);
  EXPECT_EQ(events("b")[0].at("input").at("prompt"), json::parse(R"({"task": "x"})", "expected"));
}

TEST_F(AgentAppTest, TheFilesJournalModeIsTheLoopsModelInput) {
  std::string app = writeApp(fetchPagesScript(2), fetchReportTool(),
                             "\n[execution.journal]\nmodelInput = \"full\"\n");
  ASSERT_EQ(loom({"run", app, "--id", "f"}).exitCode, 0);
  json::array log = events("f");
  ASSERT_GE(log.size(), 5u);
  EXPECT_EQ(log[3].at("stepId"), "research#turn:2:model");
  EXPECT_EQ(log[3].at("input").at("messages").as_array().size(), 3u)
      << "full: the whole transcript (prompt, turn 1's call, its result)";
}

TEST_F(AgentAppTest, AToolThatRequiresApprovalParksUntilSignalled) {
  std::string app = writeApp(fetchPagesScript(2),
                             "[[tools]]\nname = \"fetch_report\"\nrequiresApproval = true\n"
                             "command = [\"" +
                                 exampleTool("fetch_report") + "\"]\n");
  Outcome run = loom({"run", app, "--id", "ap"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("waiting for approval (signal \"approve:research#turn:1:tool:0\")"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("loom signal ap approve:research#turn:1:tool:0 '{\"approved\": true}'"),
            std::string::npos)
      << run.out;
  EXPECT_TRUE(readLines(witness_).empty()) << "the tool did not run before approval";

  // A mistyped decision is refused (exit 2, naming the shape) and nothing is recorded; before,
  // each of these was read as a denial.
  std::size_t eventsBefore = events("ap").size();
  for (const char* wrong :
       {R"({"approve": true})", "true", R"({"ok": true})", R"({"approved": "yes"})",
        R"({"approved": true, "reason": 7})", R"({"approved": true, "by": "ann"})"}) {
    Outcome mistyped = loom({"signal", "ap", "approve:research#turn:1:tool:0", wrong});
    EXPECT_EQ(mistyped.exitCode, 2) << wrong;
    EXPECT_NE(mistyped.err.find(
                  R"(an approval decision must be {"approved": true|false, "reason"?: string})"),
              std::string::npos)
        << mistyped.err;
    EXPECT_NE(mistyped.err.find("nothing was recorded"), std::string::npos) << mistyped.err;
  }
  EXPECT_EQ(events("ap").size(), eventsBefore);
  EXPECT_TRUE(readLines(witness_).empty());

  Outcome first =
      loom({"signal", "ap", "approve:research#turn:1:tool:0", R"({"approved": true})", "--json"});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  EXPECT_EQ(first.json().at("status"), "parked");
  EXPECT_EQ(first.json().at("waitingFor"), "approve:research#turn:2:tool:0");
  EXPECT_EQ(first.json().at("modelCalls"), 1) << "turn 1 replays; turn 2 calls the model";
  EXPECT_EQ(readLines(witness_), std::vector<std::string>{"fetch_report page=1"});

  Outcome denied = loom({"signal", "ap", "approve:research#turn:2:tool:0",
                         R"({"approved": false, "reason": "not page 2"})", "--json"});
  ASSERT_EQ(denied.exitCode, 0) << denied.err;
  EXPECT_EQ(denied.json().at("status"), "completed");
  EXPECT_EQ(denied.json().at("output").at("answer"), "Read every page.");
  EXPECT_EQ(readLines(witness_), std::vector<std::string>{"fetch_report page=1"})
      << "a denied call never runs";
  bool told = false;
  for (const auto& e : events("ap")) {
    if (e.at("type") == "STEP_COMPLETED" && e.at("stepId") == "research#turn:3:model") {
      told = json::toText(e.at("input")).find("not page 2") != std::string::npos;
    }
  }
  EXPECT_TRUE(told) << "the denial and its reason are written back to the model";
}

TEST_F(AgentAppTest, TheStateGrowthWarningGoesToStderrOnceAndTheRunGoesOn) {
  writeApp(fetchPagesScript(6), fetchReportTool());  // script.json
  std::string text = write("warn.toml",
                           "[agent]\nname = \"research\"\nprompt = \"p\"\n"
                           "warnTranscriptBytes = 5000\n[model]\n"
                           "script = \"script.json\"\n" +
                               fetchReportTool());
  Outcome run = loom({"run", text, "--json"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.json().at("status"), "completed");
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.err.rfind("loom: warning: agent 'research': the transcript is ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find("execution.claimCheck"), std::string::npos) << run.err;
}

TEST_F(AgentAppTest, McpServerToolsRunAsTaintedToolSteps) {
  std::string server = std::string(LOOM_SOURCE_DIR) + "/tests/agent_apps/servers/notes_server.sh";
  std::string app = writeApp(
      R"({"turns": [{"toolCalls": [{"name": "lookup", "arguments": {"topic": "churn"}}]},
                    {"answer": "done"}]})",
      "[[tools.mcp]]\nname = \"notes\"\ncommand = \"sh\"\nargs = [\"" + server + "\"]\n");
  Outcome check = loom({"config", "check", app});
  ASSERT_EQ(check.exitCode, 0) << check.out;
  EXPECT_NE(check.out.find("1 MCP server(s)"), std::string::npos) << check.out;
  Outcome run = loom({"run", app, "--id", "mcp", "--json"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.json().at("status"), "completed") << run.out;
  json::array log = events("mcp");
  ASSERT_GE(log.size(), 3u);
  EXPECT_EQ(log[2].at("stepId"), "research#turn:1:tool:0");
  EXPECT_EQ(log[2].at("effectId"), "lookup");
  EXPECT_EQ(log[2].at("taskKind"), "tool");
  EXPECT_EQ(log[2].at("output").at("__loomTaint").at("origin"), "mcp:notes");
  Outcome state = loom({"state", "mcp", "--json"});
  ASSERT_EQ(state.exitCode, 0) << state.err;
  EXPECT_EQ(state.json().at("loops").at(0).at("state").at("sawTaintFrom"),
            json::parse(R"(["mcp:notes"])", "expected"));
}

TEST_F(AgentAppTest, ConfigErrorsOfAnAppFileNameTheirPaths) {
  std::string bad = write("bad.toml", R"(
claimCheck = { toolIds = ["fetch_report"] }
[agent]
name = "research"
nme = "typo"
[model]
kind = "scripted"
)");
  Outcome run = loom({"run", bad});
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 4)
      << "a headline, then one line per problem: " << run.err;
  EXPECT_NE(run.err.find("\n  agent.nme: unknown option"), std::string::npos) << run.err;
  for (std::string_view text :
       {"3 problems",
        "claimCheck: a grouped option cannot be written at the top level; write it "
        "as execution.claimCheck",
        "agent.nme: unknown option; agent accepts name, prompt", "model.script: missing"}) {
    EXPECT_NE(run.err.find(text), std::string::npos) << text << "\n" << run.err;
  }
  EXPECT_FALSE(std::filesystem::exists(home_)) << "nothing is created for an invalid app";
  Outcome asJson = loom({"run", bad, "--json"});
  EXPECT_EQ(asJson.exitCode, 1);
  EXPECT_EQ(asJson.err, "") << "--json: the error is the JSON value on stdout";
  EXPECT_EQ(asJson.json().at("error").at("code"), "config") << asJson.out;
  EXPECT_EQ(asJson.json().at("error").at("problems").as_array().size(), 3u) << asJson.out;
  Outcome check = loom({"config", "check", bad});
  EXPECT_EQ(check.exitCode, 1);
  EXPECT_NE(check.out.find("\n  agent.nme: "), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("\n  model.script: missing"), std::string::npos) << check.out;

  std::string noScript = writeApp("{}", fetchReportTool());
  std::filesystem::remove(dir_ / "script.json");
  Outcome missing = loom({"run", noScript});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("model.script: no such file " +
                             (std::filesystem::canonical(dir_.path()) / "script.json").string()),
            std::string::npos)
      << missing.err;
}

TEST_F(AgentAppTest, AnUnknownKeyInAModelScriptIsRefusedNamingItsTurn) {
  // `content` where the script means `answer`: dropped silently before, so the turn had no
  // answer and no tool calls.
  std::string app =
      writeApp(R"({"turns": [{"toolCalls": [{"name": "fetch_report"}]}, {"content": "Done."}]})",
               fetchReportTool());
  Outcome run = loom({"run", app});
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.err.find("script.turns[1] has the unknown key \"content\"; the keys it takes are "
                         "\"toolCalls\", \"answer\""),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("model.script: "), std::string::npos) << run.err;
  for (const auto& [script, where] : std::vector<std::pair<std::string, std::string>>{
           {R"({"turns": [{"answer": "a"}], "summmary": "s"})", "script has the unknown key"},
           {R"({"generate": {"turns": 1, "answr": "a"}})", "script.generate has the unknown key"},
           {R"({"turns": [{"toolCalls": [{"name": "x", "args": {}}]}]})",
            "script.turns[0].toolCalls[0] has the unknown key \"args\""}}) {
    writeApp(script, fetchReportTool());
    Outcome check = loom({"config", "check", app});
    EXPECT_EQ(check.exitCode, 1) << script;
    EXPECT_NE((check.out + check.err).find(where), std::string::npos) << check.out << check.err;
  }
  EXPECT_FALSE(std::filesystem::exists(home_)) << "nothing is created for an invalid app";
}

TEST_F(AgentAppTest, UsageErrorsExitTwo) {
  std::string app = writeApp(fetchPagesScript(1), fetchReportTool());
  Outcome both = loom({"run", app, "--prompt", "x", "--input", "\"y\""});
  EXPECT_EQ(both.exitCode, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  Outcome promptToWorkflow = loom({"run", "example.steps", "--prompt", "x"});
  EXPECT_EQ(promptToWorkflow.exitCode, 2);
  EXPECT_NE(promptToWorkflow.err.find("--prompt is for agent apps"), std::string::npos);
  std::string noPrompt = write("np.toml",
                               "[agent]\nname = \"research\"\n[model]\n"
                               "script = \"script.json\"\n");
  Outcome none = loom({"run", noPrompt});
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("pass --prompt TEXT"), std::string::npos) << none.err;
}

TEST_F(AgentAppTest, ResumeAndSignalLoadTheAppFileAgain) {
  std::string app = writeApp(fetchPagesScript(1),
                             "[[tools]]\nname = \"fetch_report\"\nrequiresApproval = true\n"
                             "command = [\"" +
                                 exampleTool("fetch_report") + "\"]\n");
  ASSERT_EQ(loom({"run", app, "--id", "m"}).exitCode, 0);
  std::string moved = dir_ / "moved.toml";
  std::filesystem::rename(app, moved);
  Outcome lost = loom({"resume", "m"});
  EXPECT_EQ(lost.exitCode, 1);
  EXPECT_NE(lost.err.find("is a run of the agent app"), std::string::npos) << lost.err;
  EXPECT_NE(lost.err.find("cannot be loaded now"), std::string::npos) << lost.err;
  EXPECT_NE(lost.err.find("fix that, then run the command again"), std::string::npos) << lost.err;
  std::filesystem::rename(moved, app);
  Outcome resumed = loom({"resume", "m", "--json"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(resumed.json().at("status"), "parked");
  EXPECT_EQ(resumed.json().at("modelCalls"), 0) << "the recorded turn replays";
  Outcome done =
      loom({"signal", "m", "approve:research#turn:1:tool:0", R"({"approved": true})", "--json"});
  ASSERT_EQ(done.exitCode, 0) << done.err;
  EXPECT_EQ(done.json().at("status"), "completed");
}

}  // namespace
}  // namespace loom::testing
