// The implementations that run the Tool conformance suite (tool_conformance.cc).
#include <memory>

#include "loom/providers/mcp_client.h"
#include "loom/providers/subprocess_tool.h"
#include "loom/util/error.h"
#include "tool_conformance.h"

namespace loom::agent::conformance {
namespace {

ToolDefinition definition(std::string name) {
  return {std::move(name), "Conformance probe", json::object{{"type", "object"}}};
}

ToolFactory function() {
  return {"Function",
          [] {
            return ToolMade{std::make_shared<FunctionTool>(
                            definition("echo"),
                            [](const effects::EffectContext&, const json::value& a) { return a; }),
                        nullptr};
          },
          [] {
            return ToolMade{std::make_shared<FunctionTool>(
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
    return ToolMade{std::make_shared<providers::SubprocessTool>(definition(std::move(name)), o),
                nullptr};
  };
  return {"Subprocess", [make] { return make("echo", {"/bin/cat"}); },
          [make] {
            return make("fails", {"/bin/sh", "-c", "cat >/dev/null; echo boom >&2; exit 3"});
          }};
}

ToolMade mcpTool(const std::string& mode) {
  providers::McpServerOptions o;
  o.name = "scripted-" + mode;
  o.command = "bash";
  o.args = {std::string(LOOM_SOURCE_DIR) + "/tests/providers/servers/scripted_server.sh", mode};
  o.timeoutMillis = 10'000;
  auto client = std::make_shared<providers::McpClient>(o);
  client->start();
  auto tool = std::make_shared<providers::McpTool>(client, client->toolDefinitions().at(0));
  return ToolMade{tool, client};
}

ToolFactory mcp() {
  return {"McpStdio", [] { return mcpTool("echo"); }, [] { return mcpTool("fail"); }};
}

INSTANTIATE_TEST_SUITE_P(Tools, ToolConformance, ::testing::Values(function(), subprocess(), mcp()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace loom::agent::conformance
