// Where the provider tests find their MCP servers: $LOOM_MCP_SERVERS_DIR, or build/mcp-servers
// in the source tree (scripts/install-mcp-servers.sh fills it). A test that needs them calls
// LOOM_REQUIRE_MCP_SERVERS() first: it skips, with the command to run, when they are missing.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "loom/providers/mcp_client.h"

namespace loom::testing {

inline std::string mcpServersDir() {
  const char* dir = std::getenv("LOOM_MCP_SERVERS_DIR");
  return dir && *dir ? std::string(dir) : std::string(LOOM_SOURCE_DIR) + "/build/mcp-servers";
}

inline std::string mcpPackageEntry(const std::string& package) {
  return mcpServersDir() + "/node_modules/@modelcontextprotocol/" + package + "/dist/index.js";
}

inline bool mcpServersInstalled() {
  return std::filesystem::exists(mcpPackageEntry("server-everything")) &&
         std::filesystem::exists(mcpPackageEntry("server-filesystem"));
}

#define LOOM_REQUIRE_MCP_SERVERS()                                                            \
  do {                                                                                        \
    if (!::loom::testing::mcpServersInstalled()) {                                            \
      GTEST_SKIP() << "MCP servers are not installed in " << ::loom::testing::mcpServersDir() \
                   << "; run scripts/install-mcp-servers.sh (needs npm) to run this test";    \
    }                                                                                         \
  } while (0)

// Test scripts and servers beside these tests.
inline std::string testServer(const std::string& file) {
  return std::string(LOOM_SOURCE_DIR) + "/tests/providers/servers/" + file;
}

inline providers::McpServerOptions everythingServer(int64_t timeoutMillis = 20'000) {
  providers::McpServerOptions o;
  o.name = "everything";
  o.command = "node";
  o.args = {mcpPackageEntry("server-everything"), "stdio"};
  o.timeoutMillis = timeoutMillis;
  return o;
}

inline providers::McpServerOptions filesystemServer(const std::string& root) {
  providers::McpServerOptions o;
  o.name = "files";
  o.command = "node";
  o.args = {mcpPackageEntry("server-filesystem"), root};
  o.timeoutMillis = 20'000;
  return o;
}

inline providers::McpServerOptions scriptedServer(const std::string& mode,
                                                  int64_t timeoutMillis = 5'000) {
  providers::McpServerOptions o;
  o.name = "scripted";
  o.command = "bash";
  o.args = {testServer("scripted_server.sh"), mode};
  o.timeoutMillis = timeoutMillis;
  return o;
}

// Milliseconds `fn` took.
template <typename Fn>
int64_t millisOf(Fn&& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

}  // namespace loom::testing
