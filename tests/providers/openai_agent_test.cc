// A Loom agent whose model is OpenAiModel against a local chat-completions server: several
// tool calls in one turn, one with arguments that are not JSON (the tool does not run and the
// model is told), usage in the journaled turn output, and the API key nowhere in the journal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "loom/agent/agent_loop.h"
#include "loom/agent/agent_state.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/providers/openai_model.h"
#include "loom/workflow/runtime.h"
#include "support/chat_server.h"

namespace loom::testing {
namespace {

constexpr const char* kKey = "sk-agent-test-91b2c3d4";

TEST(OpenAiAgent, ToolCallsIncludingInvalidArgumentsRunThroughTheLoop) {
  ::setenv("LOOM_TEST_AGENT_KEY", kKey, 1);
  ChatServer server;
  server.push(completion(
      json::object{{"role", "assistant"},
                   {"content", nullptr},
                   {"tool_calls", json::array{toolCall("call_a", "lookup", R"({"q":"alpha"})"),
                                              toolCall("call_b", "lookup", "{\"q\": \"beta\""),
                                              toolCall("call_c", "lookup", R"({"q":"gamma"})")}}},
      "tool_calls", 300, 40));
  server.push(answer("alpha and gamma found"));

  auto clock = std::make_shared<ManualClock>();
  effects::TaskRegistry tasks;
  providers::OpenAiModelOptions o;
  o.baseUrl = server.baseUrl();
  o.model = "test-model";
  o.apiKeyEnv = "LOOM_TEST_AGENT_KEY";
  o.clock = clock;
  auto model = providers::registerOpenAiModel(tasks, o);
  std::vector<std::string> lookedUp;
  std::mutex lookedUpMu;  // a turn's calls run concurrently
  agent::ToolDefinition lookupDef{
      "lookup", "Looks a word up",
      json::value{{"type", "object"}, {"properties", {{"q", {{"type", "string"}}}}}}};
  agent::registerTool(tasks,
                      std::make_shared<agent::FunctionTool>(
                          lookupDef, [&](const effects::EffectContext&, const json::value& a) {
                            std::lock_guard lock(lookedUpMu);
                            lookedUp.emplace_back(a.at("q").as_string());
                            return json::value{{"found", a.at("q")}};
                          }));
  agent::AgentOptions options;
  options.model = model->id();
  options.tools = {lookupDef};
  options.system = "You look things up.";
  workflow::WorkflowRegistry workflows;
  agent::registerAgentWorkflow(workflows, "research", options);
  kernel::MemoryEventStore store;
  workflow::RuntimeOptions ro;
  ro.clock = clock;
  workflow::WorkflowRuntime runtime(store, workflows, tasks, nullptr, ro);

  auto r = runtime.start("research", json::value("find alpha, beta, gamma"), {.id = "oa"});
  ASSERT_EQ(r.status, kernel::ExecutionStatus::kCompleted) << json::toText(r.error);
  EXPECT_EQ(r.output.at("answer"), "alpha and gamma found");
  std::sort(lookedUp.begin(), lookedUp.end());  // the turn's calls ran concurrently
  EXPECT_EQ(lookedUp, (std::vector<std::string>{"alpha", "gamma"}));

  // What the model read on turn 2: its own calls (the bad one with "{}"), then three results.
  json::value second = server.body(1);
  const auto& m = second.at("messages").as_array();
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0].at("role"), "system");
  EXPECT_EQ(m[2].at("tool_calls").at(1).at("function").at("arguments"), "{}");
  EXPECT_EQ(m[3].at("tool_call_id"), "call_a");
  EXPECT_EQ(m[3].at("content"), R"({"found":"alpha"})");
  EXPECT_EQ(m[4].at("tool_call_id"), "call_b");
  std::string told(m[4].at("content").as_string());
  EXPECT_NE(told.find("tool 'lookup' was not called: the arguments are not valid JSON"),
            std::string::npos)
      << told;
  EXPECT_NE(told.find(R"({\"q\": \"beta\")"), std::string::npos)
      << "the raw text is quoted: " << told;
  EXPECT_EQ(m[5].at("tool_call_id"), "call_c");
  EXPECT_EQ(second.at("tools").at(0).at("function").at("name"), "lookup");

  // Usage and finish reason are journaled with the turn output (the agent state reads them).
  auto events = store.read("oa");
  json::object state = agent::foldAgentState(events, "research");
  const auto& turn1 = state.at("turnOutputs").at(0);
  EXPECT_EQ(turn1.at("usage"), (json::value{{"inputTokens", 300}, {"outputTokens", 40}}));
  EXPECT_EQ(turn1.at("finishReason"), "tool_calls");
  EXPECT_EQ(state.at("frames").as_array().size(), 2u);

  // The key went only into the Authorization header.
  EXPECT_EQ(server.requests()[0].authorization, std::string("Bearer ") + kKey);
  std::string journal;
  for (const auto& e : events) journal += kernel::toText(e) + "\n";
  EXPECT_EQ(journal.find(kKey), std::string::npos);
  EXPECT_NE(journal.find("openai:test-model"), std::string::npos);
}

}  // namespace
}  // namespace loom::testing
