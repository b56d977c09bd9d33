// The example apps of examples/agents run as documented: mcp-files.toml drives the real
// filesystem MCP server (installed by scripts/install-mcp-servers.sh) and records tainted
// results; openai.toml takes its endpoint from the environment.
#include <gtest/gtest.h>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

const std::string kExamples = std::string(LOOM_SOURCE_DIR) + "/examples/agents/";

TEST(ExamplesCli, McpFilesReadsTheExampleFolderThroughTheFilesystemServer) {
  if (!std::filesystem::exists(std::string(LOOM_SOURCE_DIR) +
                               "/build/mcp-servers/node_modules/@modelcontextprotocol/"
                               "server-filesystem/dist/index.js")) {
    GTEST_SKIP() << "the MCP servers are not installed: run ./scripts/install-mcp-servers.sh";
  }
  TempDir dir;
  std::string home = dir / "home";
  Outcome run =
      runLoom({"--home", home, "run", kExamples + "mcp-files.toml", "--id", "m", "--json"}, dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.json().at("status").as_string(), "completed");
  Outcome state = runLoom({"--home", home, "state", "m", "--json"}, dir);
  ASSERT_EQ(state.exitCode, 0) << state.err;
  json::value s = state.json().at("loops").as_array()[0].at("state");
  EXPECT_EQ(s.at("sawTaintFrom"), (json::array{"mcp:files"}));
  EXPECT_EQ(s.at("frames").as_array().size(), 3u);
  EXPECT_NE(json::toText(s).find("EMEA led with 18%"), std::string::npos);
}

TEST(ExamplesCli, OpenAiExampleTakesItsEndpointFromTheEnvironment) {
  TempDir dir;
  Outcome unset = runLoom({"config", "check", kExamples + "openai.toml"}, dir,
                          {"LOOM_OPENAI_BASE_URL=", "LOOM_OPENAI_MODEL=", "OPENAI_API_KEY=k"});
  EXPECT_NE(unset.exitCode, 0);
  EXPECT_NE((unset.out + unset.err).find("LOOM_OPENAI_BASE_URL"), std::string::npos)
      << unset.out << unset.err;
  Outcome set = runLoom(
      {"config", "check", kExamples + "openai.toml"}, dir,
      {"LOOM_OPENAI_BASE_URL=http://127.0.0.1:9/v1", "LOOM_OPENAI_MODEL=tiny", "OPENAI_API_KEY=k"});
  EXPECT_EQ(set.exitCode, 0) << set.out << set.err;
}

}  // namespace
}  // namespace loom::testing
