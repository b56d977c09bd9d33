// Tool SPI conformance (agent/tool.h): every Tool implementation runs this suite unchanged,
// instantiated at the end once per implementation (an in-process FunctionTool, a
// SubprocessTool, and an McpTool of a stdio server). A factory makes an echoing tool (its
// result carries the "text" argument) and a failing one; the suite asserts what the agent
// loop relies on: a usable definition, the tool's own result back, a failure as a typed
// loom::Error (which the loop tells the model about), and thread safety.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "loom/agent/tool.h"
#include "loom/providers/mcp_client.h"
#include "loom/providers/subprocess_tool.h"
#include "loom/util/error.h"

namespace loom::agent::conformance {
namespace {

struct Made {
  std::shared_ptr<Tool> tool;
  std::shared_ptr<void> keepAlive;  // a server's client
};

struct ToolFactory {
  std::string name;
  // A tool whose result, as JSON text, contains its "text" argument.
  std::function<Made()> makeEcho;
  // A tool whose every call fails.
  std::function<Made()> makeFailing;
};

effects::EffectContext callContext(const Tool& tool, int i) {
  effects::EffectContext ctx;
  ctx.executionId = "tool-conformance";
  ctx.stepId = "agent#turn:" + std::to_string(i) + ":tool:0";
  ctx.effectId = tool.definition().name;
  ctx.taskKind = "tool";
  return ctx;
}

class ToolConformance : public ::testing::TestWithParam<ToolFactory> {};

TEST_P(ToolConformance, TheDefinitionHasANameAndAnObjectOrNullSchema) {
  Made made = GetParam().makeEcho();
  const ToolDefinition& d = made.tool->definition();
  EXPECT_FALSE(d.name.empty());
  EXPECT_TRUE(d.inputSchema.is_null() || d.inputSchema.is_object()) << json::toText(d.inputSchema);
}

TEST_P(ToolConformance, ACallReturnsWhatTheToolProduced) {
  Made made = GetParam().makeEcho();
  json::value out = made.tool->call(callContext(*made.tool, 1), {{"text", "echo-7f3a"}});
  EXPECT_NE(json::toText(out).find("echo-7f3a"), std::string::npos) << json::toText(out);
}

TEST_P(ToolConformance, AFailedCallIsATypedErrorWithAMessage) {
  Made made = GetParam().makeFailing();
  try {
    json::value out = made.tool->call(callContext(*made.tool, 1), {{"text", "x"}});
    FAIL() << "a failing tool returned " << json::toText(out);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()), "");
  }
}

TEST_P(ToolConformance, ConcurrentCallsEachGetTheirOwnResult) {
  constexpr int kThreads = 6;
  Made made = GetParam().makeEcho();
  std::vector<std::string> outs(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      json::value args{{"text", "call-" + std::to_string(i)}};
      outs[i] = json::toText(made.tool->call(callContext(*made.tool, i + 1), args));
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_NE(outs[i].find("call-" + std::to_string(i)), std::string::npos) << outs[i];
  }
}

// --- implementations ---------------------------------------------------------------------

ToolDefinition definition(std::string name) {
  return {std::move(name), "Conformance probe", json::object{{"type", "object"}}};
}

ToolFactory function() {
  return {"Function",
          [] {
            return Made{std::make_shared<FunctionTool>(
                            definition("echo"),
                            [](const effects::EffectContext&, const json::value& a) { return a; }),
                        nullptr};
          },
          [] {
            return Made{std::make_shared<FunctionTool>(
                            definition("fails"),
                            [](const effects::EffectContext&, const json::value&) -> json::value {
                              throw FailedPreconditionError("the probe failed");
                            }),
                        nullptr};
          }};
}

ToolFactory subprocess() {
  auto make = [](std::string name, std::vector<std::string> command) {
    providers::SubprocessToolOptions o;
    o.command = std::move(command);
    o.timeoutMillis = 10'000;
    return Made{std::make_shared<providers::SubprocessTool>(definition(std::move(name)), o),
                nullptr};
  };
  return {"Subprocess", [make] { return make("echo", {"/bin/cat"}); },
          [make] {
            return make("fails", {"/bin/sh", "-c", "cat >/dev/null; echo boom >&2; exit 3"});
          }};
}

Made mcpTool(const std::string& mode) {
  providers::McpServerOptions o;
  o.name = "scripted-" + mode;
  o.command = "bash";
  o.args = {std::string(LOOM_SOURCE_DIR) + "/tests/providers/servers/scripted_server.sh", mode};
  o.timeoutMillis = 10'000;
  auto client = std::make_shared<providers::McpClient>(o);
  client->start();
  auto tool = std::make_shared<providers::McpTool>(client, client->toolDefinitions().at(0));
  return Made{tool, client};
}

ToolFactory mcp() {
  return {"McpStdio", [] { return mcpTool("echo"); }, [] { return mcpTool("fail"); }};
}

INSTANTIATE_TEST_SUITE_P(Tools, ToolConformance, ::testing::Values(function(), subprocess(), mcp()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace loom::agent::conformance
