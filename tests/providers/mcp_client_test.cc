// McpClient against real MCP servers (the reference "everything" server, an SDK server that
// pages tools/list) and against small scripted servers that misbehave on purpose: garbage on
// stdout, no answer, exiting, dying mid-call. Every failure must be typed and bounded.
#include <signal.h>

#include <cerrno>
#include <thread>

#include "loom/effects/taint.h"
#include "loom/util/error.h"
#include "mcp_servers.h"

namespace loom::testing {
namespace {

using providers::McpClient;
using providers::McpServerOptions;

const agent::ToolDefinition* findTool(const McpClient& client, const std::string& name) {
  for (const auto& t : client.toolDefinitions()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

bool processGone(int pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

TEST(McpClient, HandshakesListsAndCallsTheEverythingServer) {
  LOOM_REQUIRE_MCP_SERVERS();
  McpClient client(everythingServer());
  client.start();
  EXPECT_TRUE(providers::isSupportedMcpProtocolVersion(client.protocolVersion()));
  EXPECT_EQ(client.serverInfo().at("name").as_string(), "mcp-servers/everything");
  for (const char* name : {"echo", "get-sum", "get-tiny-image"}) {
    ASSERT_NE(findTool(client, name), nullptr) << name;
  }
  const auto* echo = findTool(client, "echo");
  EXPECT_EQ(echo->description, "Echoes back the input string");
  EXPECT_EQ(echo->inputSchema.at("properties").at("message").at("type").as_string(), "string");

  json::value raw = client.callTool("echo", json::value{{"message", "hi"}});
  EXPECT_EQ(raw.at("content").at(0).at("text").as_string(), "Echo: hi");

  providers::McpTool tool(std::shared_ptr<McpClient>(&client, [](McpClient*) {}), *echo);
  json::value result = tool.call({}, json::value{{"message", "tainted?"}});
  EXPECT_EQ(effects::taintOrigin(result), "mcp:everything");
  EXPECT_EQ(effects::untainted(result).as_string(), "Echo: tainted?");
}

TEST(McpClient, MapsTheEverythingServersContentKinds) {
  LOOM_REQUIRE_MCP_SERVERS();
  McpClient client(everythingServer());
  client.start();
  auto map = [&](const char* tool, json::value args) {
    return providers::mapMcpToolResult(client.callTool(tool, args), "everything", tool);
  };
  EXPECT_EQ(map("get-sum", json::value{{"a", 2}, {"b", 3}}).as_string(),
            "The sum of 2 and 3 is 5.");

  json::value image = map("get-tiny-image", json::object{});
  const auto& parts = image.at("parts").as_array();
  ASSERT_GE(parts.size(), 2u);
  bool sawImage = false;
  for (const auto& p : parts) {
    if (p.at("type") != "image") continue;
    sawImage = true;
    EXPECT_EQ(p.at("mimeType").as_string(), "image/png");
    EXPECT_EQ(std::string(p.at("data").as_string()).rfind("iVBORw0KGgo", 0), 0u);  // PNG magic
  }
  EXPECT_TRUE(sawImage);

  json::value reference = map("get-resource-reference", json::object{});
  const auto& resource = reference.at("parts").at(1).as_object();
  EXPECT_EQ(resource.at("type").as_string(), "resource");
  EXPECT_EQ(resource.at("uri").as_string(), "demo://resource/dynamic/text/1");
  EXPECT_TRUE(resource.contains("text"));

  json::value links = map("get-resource-links", json::value{{"count", 2}});
  EXPECT_EQ(links.at("parts").at(1).at("link").as_bool(), true);

  json::value structured = map("get-structured-content", json::value{{"location", "Chicago"}});
  EXPECT_TRUE(structured.at("temperature").is_number());

  try {
    map("echo", json::object{});  // no "message": the server answers isError
    FAIL() << "isError must throw";
  } catch (const InvalidArgumentError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("MCP tool 'echo' on server 'everything' reported an error"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("expected string"), std::string::npos) << what;
  }
}

TEST(McpClient, FollowsTheToolsListCursor) {
  LOOM_REQUIRE_MCP_SERVERS();
  McpServerOptions o;
  o.name = "pager";
  o.command = "node";
  o.args = {testServer("paging_server.mjs"), mcpServersDir()};
  McpClient client(o);
  client.start();
  std::vector<std::string> names;
  for (const auto& t : client.toolDefinitions()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"page_tool_0", "page_tool_1", "page_tool_2",
                                             "page_tool_3", "page_tool_4"}));
  EXPECT_EQ(client.callTool("page_tool_4", json::object{}).at("content").at(0).at("text"),
            "called page_tool_4");
}

TEST(McpClient, AnswersServerRequestsItDoesNotSupport) {
  McpClient client(scriptedServer("asks"));
  client.start();
  std::string replies(
      client.callTool("probe", json::object{}).at("content").at(0).at("text").as_string());
  EXPECT_NE(replies.find(R"("id":"s1","error":{"code":-32601)"), std::string::npos) << replies;
  EXPECT_NE(replies.find(R"("id":"s2","result":{})"), std::string::npos) << replies;
}

TEST(McpClient, AServerThatNeverAnswersIsADeadlineWithinTheTimeout) {
  McpServerOptions o;
  o.name = "silent";
  o.command = "sleep";
  o.args = {"100"};
  o.timeoutMillis = 400;
  McpClient client(o);
  int64_t ms = millisOf([&] { EXPECT_THROW(client.start(), DeadlineExceededError); });
  EXPECT_GE(ms, 400);
  EXPECT_LT(ms, 3000);
  EXPECT_EQ(client.pid(), 0);
}

TEST(McpClient, AToolCallThatIsNeverAnsweredTimesOutAndTheServerStaysUsable) {
  McpClient client(scriptedServer("hang", 400));
  client.start();
  int pid = client.pid();
  int64_t ms = millisOf([&] {
    try {
      client.callTool("probe", json::object{});
      ADD_FAILURE() << "expected a deadline";
    } catch (const DeadlineExceededError& e) {
      EXPECT_NE(std::string(e.what()).find("did not answer tools/call within 400 ms"),
                std::string::npos)
          << e.what();
    }
  });
  EXPECT_LT(ms, 3000);
  EXPECT_EQ(client.pid(), pid) << "a timeout does not restart the server";
}

TEST(McpClient, GarbageOnStdoutIsDataLossAndTheNextCallRestartsTheServer) {
  {
    McpServerOptions o = scriptedServer("hang");
    o.command = "bash";
    o.args = {"-c", "read -r line; echo 'Server starting... not JSON'; sleep 30"};
    McpClient client(o);
    int64_t ms = millisOf([&] { EXPECT_THROW(client.start(), DataLossError); });
    EXPECT_LT(ms, 3000);
  }
  McpClient client(scriptedServer("garbage"));
  client.start();
  int first = client.pid();
  try {
    client.callTool("probe", json::object{});
    FAIL() << "expected DataLossError";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("<html>this is not JSON-RPC</html>"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(client.callTool("probe", json::object{}), DataLossError);  // restarted, same fault
  EXPECT_TRUE(processGone(first));
}

TEST(McpClient, AServerThatExitsIsUnavailableWithItsStatusAndStderr) {
  McpClient client(scriptedServer("exit"));
  client.start();
  try {
    client.callTool("probe", json::object{});
    FAIL() << "expected UnavailableError";
  } catch (const UnavailableError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("exited with status 3"), std::string::npos) << what;
    EXPECT_NE(what.find("scripted server: giving up"), std::string::npos) << what;
  }
}

TEST(McpClient, AServerThatExitsWhileStartingSaysNothingRanNotThatACallRestartsIt) {
  McpServerOptions o;
  o.name = "dies";
  o.command = "sh";
  o.args = {"-c", "echo 'dies: bad flag' >&2; exit 4"};
  McpClient client(o);
  try {
    client.start();
    FAIL() << "expected UnavailableError";
  } catch (const UnavailableError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("while Loom was starting it"), std::string::npos) << what;
    EXPECT_EQ(what.find("the next call starts the server again"), std::string::npos) << what;
    EXPECT_NE(what.find("dies: bad flag"), std::string::npos) << what;
  }
}

TEST(McpClient, AServerKilledMidCallFailsTheCallAtOnceAndIsRestarted) {
  LOOM_REQUIRE_MCP_SERVERS();
  McpClient client(everythingServer(30'000));
  client.start();
  int pid = client.pid();
  std::thread killer([pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(-pid, SIGKILL);  // the server crashing: its whole group (guard and server) dies
  });
  int64_t ms = millisOf([&] {
    try {
      client.callTool("trigger-long-running-operation",
                      json::value{{"duration", 20}, {"steps", 2}});
      ADD_FAILURE() << "expected UnavailableError";
    } catch (const UnavailableError& e) {
      EXPECT_NE(std::string(e.what()).find("was killed by signal 9"), std::string::npos)
          << e.what();
    }
  });
  killer.join();
  EXPECT_LT(ms, 5000) << "the death is noticed at once, not at the 30 s timeout";
  EXPECT_EQ(
      client.callTool("echo", json::value{{"message", "again"}}).at("content").at(0).at("text"),
      "Echo: again");
  EXPECT_NE(client.pid(), pid);
}

TEST(McpClient, CloseStopsTheServerAndLaterCallsFail) {
  LOOM_REQUIRE_MCP_SERVERS();
  McpClient client(everythingServer());
  client.start();
  int pid = client.pid();
  ASSERT_GT(pid, 0);
  int64_t ms = millisOf([&] { client.close(); });
  EXPECT_LT(ms, 3000);
  EXPECT_TRUE(processGone(pid));
  EXPECT_THROW(client.callTool("echo", json::value{{"message", "x"}}), FailedPreconditionError);
  client.close();  // idempotent
}

TEST(McpClient, CloseKillsAServerThatIgnoresStdinAndSigterm) {
  McpServerOptions o = scriptedServer("hang");
  o.args = {"-c", "trap '' TERM; " + testServer("scripted_server.sh") + " hang; sleep 30"};
  McpClient client(o);
  client.start();
  int pid = client.pid();
  int64_t ms = millisOf([&] { client.close(); });
  EXPECT_GE(ms, 1000) << "it waited for a graceful exit first";
  EXPECT_LT(ms, 5000);
  EXPECT_TRUE(processGone(pid));
  // The members the guard started are killed with it; init reaps them a moment later.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (::kill(-pid, 0) == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(::kill(-pid, 0), 0) << "the whole process group is gone";
}

TEST(McpClient, RegisteringTwoServersWithOneToolNameIsRefused) {
  effects::TaskRegistry tasks;
  auto first = providers::registerMcpServer(tasks, scriptedServer("hang"));
  ASSERT_NE(tasks.find("probe"), nullptr);
  EXPECT_EQ(tasks.find("probe")->definition.kind, "tool");
  EXPECT_EQ(tasks.find("probe")->definition.description, "Probes the client");
  try {
    providers::registerMcpServer(tasks, scriptedServer("garbage"));
    FAIL() << "expected AlreadyExistsError";
  } catch (const AlreadyExistsError& e) {
    EXPECT_NE(std::string(e.what()).find("lists a tool 'probe'"), std::string::npos) << e.what();
  }
  first->close();
}

TEST(McpClient, ACommandThatCannotStartIsUnavailableNamingIt) {
  McpServerOptions o;
  o.name = "missing";
  o.command = "/nonexistent/mcp-server";
  McpClient client(o);
  try {
    client.start();
    FAIL() << "expected UnavailableError";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start MCP server 'missing'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(McpClient(McpServerOptions{}), InvalidArgumentError);
}

}  // namespace
}  // namespace loom::testing
