// A Loom agent (scripted model, WorkflowRuntime, memory log) driving real MCP servers: results
// are tainted with the server's origin, fenced in the transcript and recorded in sawTaintFrom;
// an image arrives as a media part; isError becomes a failed call the model is told about; a
// server killed mid-run fails that one call, and the next call restarts it.
#include <signal.h>

#include <fstream>
#include <thread>

#include "agent/agent_fixture.h"
#include "mcp_servers.h"
#include "support/temp_dir.h"

namespace loom::testing {
namespace {

using kernel::ExecutionStatus;

class McpAgent : public AgentFixture {
 protected:
  ~McpAgent() override {
    for (auto& c : clients_) c->close();
  }

  void addServer(providers::McpServerOptions options, const std::vector<std::string>& offer) {
    auto client = providers::registerMcpServer(tasks_, std::move(options));
    for (const auto& def : client->toolDefinitions()) {
      if (std::find(offer.begin(), offer.end(), def.name) != offer.end()) mcpTools_.push_back(def);
    }
    clients_.push_back(std::move(client));
  }

  void run(json::array turns, const std::string& id) {
    agent::AgentOptions o;
    o.tools = mcpTools_;
    setUpAgent(json::value{{"turns", std::move(turns)}}, o);
    result_ = runtime(store_)->start("research", json::value("use the tools"), {.id = id});
    ASSERT_EQ(result_.status, ExecutionStatus::kCompleted) << json::toText(result_.error);
  }

  // The tool messages the model read on turn `turn`, in call order.
  std::vector<json::object> toolMessages(int turn) {
    std::vector<json::object> out;
    for (const auto& m : model_->requests.at("research#turn:" + std::to_string(turn) + ":model")) {
      if (m.at("role") == "tool") out.push_back(m.as_object());
    }
    return out;
  }

  json::value recordedOutput(const std::string& id, const std::string& stepId) {
    for (const auto& e : store_.read(id)) {
      if (e.type == kernel::EventType::kStepCompleted &&
          e.data.at("stepId").as_string() == stepId) {
        return e.data.at("output");
      }
    }
    return nullptr;
  }

  static json::object call(const std::string& name, json::value args) {
    return json::object{{"name", name}, {"arguments", std::move(args)}};
  }

  std::vector<std::shared_ptr<providers::McpClient>> clients_;
  std::vector<agent::ToolDefinition> mcpTools_;
  workflow::RunResult result_;
};

std::string text(const json::value& v) {
  return v.is_string() ? std::string(v.get_string()) : json::toText(v);
}

TEST_F(McpAgent, EverythingServerResultsAreTaintedFencedAndMediaAndErrorsArrive) {
  LOOM_REQUIRE_MCP_SERVERS();
  addServer(everythingServer(), {"echo", "get-sum", "get-tiny-image"});
  run(json::array{json::object{{"toolCalls",
                                json::array{call("echo", json::value{{"message", "hello loom"}}),
                                            call("get-sum", json::value{{"a", 2}, {"b", 40}}),
                                            call("get-tiny-image", json::object{}),
                                            call("echo", json::object{})}}},  // no message: isError
                  json::object{{"answer", "done"}}},
      "everything");
  EXPECT_EQ(stepIds("everything")[1], "research#turn:1:tool:0|tool|echo");

  auto messages = toolMessages(2);
  ASSERT_EQ(messages.size(), 4u);
  for (int j = 0; j < 3; ++j) {
    const json::value& c = messages[j].at("content");
    // Text is fenced; an image stays a part the model can see, after a fenced notice.
    std::string content = c.is_array() ? text(c.as_array()[0].at("text")) : text(c);
    EXPECT_EQ(content.rfind("<untrusted-data origin=\"mcp:everything\">", 0), 0u) << content;
    EXPECT_EQ(messages[j].at("taint"), (json::array{"mcp:everything"}));
  }
  bool imagePart = false;
  for (const auto& p : messages[2].at("content").as_array()) {
    if (p.at("type") == "image") imagePart = true;
  }
  EXPECT_TRUE(imagePart) << "an untrusted image reaches the model as an image part";
  EXPECT_NE(text(messages[0].at("content")).find("Echo: hello loom"), std::string::npos);
  EXPECT_NE(text(messages[1].at("content")).find("The sum of 2 and 40 is 42."), std::string::npos);

  // The image step's recorded output: tainted, and its value is a media result.
  json::value image = recordedOutput("everything", "research#turn:1:tool:2");
  EXPECT_EQ(effects::taintOrigin(image), "mcp:everything");
  bool sawImage = false;
  for (const auto& p : effects::untainted(image).at("parts").as_array()) {
    if (p.at("type") == "image" && p.at("mimeType") == "image/png") sawImage = true;
  }
  EXPECT_TRUE(sawImage);

  // isError: a failed call, told to the model, not a result.
  EXPECT_TRUE(messages[3].at("isError").as_bool());
  EXPECT_NE(text(messages[3].at("content").at("error")).find("reported an error"),
            std::string::npos);
  EXPECT_EQ(recordedOutput("everything", "research#turn:1:tool:3"), json::value(nullptr));

  json::object state = agent::foldAgentState(store_.read("everything"), "research");
  EXPECT_EQ(state.at("sawTaintFrom"), (json::array{"mcp:everything"}));
  EXPECT_EQ(state.at("frames").as_array().size(), 3u);
}

TEST_F(McpAgent, FilesystemServerReadsAFolderAndRefusesOutsideIt) {
  LOOM_REQUIRE_MCP_SERVERS();
  loom::testing::TempDir scratch("mcp-fs");
  const auto& root = scratch.path();
  std::filesystem::create_directories(root / "notes");
  std::ofstream(root / "report.txt") << "Quarterly revenue grew 12%.\n";
  addServer(filesystemServer(root.string()), {"list_directory", "read_text_file"});
  run(json::array{json::object{
                      {"toolCalls",
                       json::array{call("list_directory", json::value{{"path", root.string()}}),
                                   call("read_text_file",
                                        json::value{{"path", (root / "report.txt").string()}}),
                                   call("read_text_file",
                                        json::value{{"path", "/etc/hostname"}})}}},
                  json::object{{"answer", "read it"}}},
      "files");
  auto messages = toolMessages(2);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_NE(text(messages[0].at("content")).find("[FILE] report.txt"), std::string::npos);
  EXPECT_NE(text(messages[0].at("content")).find("[DIR] notes"), std::string::npos);
  EXPECT_NE(text(messages[1].at("content")).find("Quarterly revenue grew 12%."), std::string::npos);
  EXPECT_EQ(messages[1].at("taint"), (json::array{"mcp:files"}));
  EXPECT_TRUE(messages[2].at("isError").as_bool());
  EXPECT_NE(text(messages[2].at("content")).find("Access denied"), std::string::npos);
  json::object state = agent::foldAgentState(store_.read("files"), "research");
  EXPECT_EQ(state.at("sawTaintFrom"), (json::array{"mcp:files"}));
}

TEST_F(McpAgent, AServerKilledMidRunFailsThatCallCleanlyAndTheRunGoesOn) {
  LOOM_REQUIRE_MCP_SERVERS();
  addServer(everythingServer(30'000), {"trigger-long-running-operation", "echo"});
  // No durable retry (it would start the server again and run the call once more): the model
  // hears of the failure.
  retry_.effects["trigger-long-running-operation"].maxAttempts = 1;
  int pid = clients_[0]->pid();
  std::thread killer([pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    ::kill(-pid, SIGKILL);  // the server crashing: its whole group (guard and server) dies
  });
  int64_t ms = millisOf([&] {
    run(json::array{json::object{{"toolCalls",
                                  json::array{call("trigger-long-running-operation",
                                                   json::value{{"duration", 20}, {"steps", 2}})}}},
                    json::object{
                        {"toolCalls",
                         json::array{call("echo", json::value{{"message", "still here"}})}}},
                    json::object{{"answer", "recovered"}}},
        "killed");
  });
  killer.join();
  EXPECT_LT(ms, 10'000) << "no wait for the 30 s timeout";
  EXPECT_EQ(result_.output.at("answer").as_string(), "recovered");
  auto failed = toolMessages(2);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_TRUE(failed[0].at("isError").as_bool());
  EXPECT_NE(text(failed[0].at("content")).find("was killed by signal 9"), std::string::npos);
  auto after = toolMessages(3);
  EXPECT_NE(text(after.back().at("content")).find("Echo: still here"), std::string::npos);
  // The failure is journaled as STEP_FAILED; a resume replays it instead of calling again.
  auto r = runtime(store_)->resume("killed");
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.effectsRun, 0);
}

}  // namespace
}  // namespace loom::testing
