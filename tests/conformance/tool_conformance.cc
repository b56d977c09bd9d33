// Tool SPI conformance (agent/tool.h): every Tool implementation runs this suite unchanged,
// instantiated once per implementation (tool_conformance_implementations.cc: an in-process
// FunctionTool, a SubprocessTool, and an McpTool of a stdio server; the Python package's
// python/tests/native: a tool written in Python). A factory makes an echoing tool (its
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
#include "loom/util/error.h"
#include "tool_conformance.h"

namespace loom::agent::conformance {
namespace {

effects::EffectContext callContext(const Tool& tool, int i) {
  effects::EffectContext ctx;
  ctx.executionId = "tool-conformance";
  ctx.stepId = "agent#turn:" + std::to_string(i) + ":tool:0";
  ctx.effectId = tool.definition().name;
  ctx.taskKind = "tool";
  return ctx;
}

}  // namespace

TEST_P(ToolConformance, TheDefinitionHasANameAndAnObjectOrNullSchema) {
  ToolMade made = GetParam().makeEcho();
  const ToolDefinition& d = made.tool->definition();
  EXPECT_FALSE(d.name.empty());
  EXPECT_TRUE(d.inputSchema.is_null() || d.inputSchema.is_object()) << json::toText(d.inputSchema);
}

TEST_P(ToolConformance, ACallReturnsWhatTheToolProduced) {
  ToolMade made = GetParam().makeEcho();
  json::value out = made.tool->call(callContext(*made.tool, 1), {{"text", "echo-7f3a"}});
  EXPECT_NE(json::toText(out).find("echo-7f3a"), std::string::npos) << json::toText(out);
}

TEST_P(ToolConformance, AFailedCallIsATypedErrorWithAMessage) {
  ToolMade made = GetParam().makeFailing();
  try {
    json::value out = made.tool->call(callContext(*made.tool, 1), {{"text", "x"}});
    FAIL() << "a failing tool returned " << json::toText(out);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()), "");
  }
}

TEST_P(ToolConformance, ConcurrentCallsEachGetTheirOwnResult) {
  constexpr int kThreads = 6;
  ToolMade made = GetParam().makeEcho();
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

}  // namespace loom::agent::conformance
