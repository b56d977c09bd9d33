// The provider options docs/providers.md documents work from an app file: the model's retries,
// headers and extra body against a local chat-completions server, and an MCP server's working
// folder and request timeout.
#include <gtest/gtest.h>

#include <fstream>

#include "support/chat_server.h"
#include "support/loom_process.h"

namespace loom::testing {
namespace {

class ProviderOptions : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }
  Outcome loom(std::vector<std::string> args, std::vector<std::string> env = {}) {
    args.insert(args.begin(), {"--home", home_});
    return runLoom(args, dir_, env);
  }
  std::string openAiApp(const std::string& extra, const std::string& keyEnv = "") {
    return write("app.toml",
                 "[agent]\nname = \"research\"\nprompt = \"Say hi.\"\n\n[model]\n"
                 "kind = \"openai\"\nbaseUrl = \"" +
                     server_.baseUrl() + "\"\nmodel = \"test-model\"\napiKeyEnv = \"" + keyEnv +
                     "\"\n" + extra);
  }
  ChatServer server_;
  TempDir dir_;
  std::string home_ = dir_ / "home";
};

TEST_F(ProviderOptions, RetriesHeadersAndExtraBodyComeFromTheAppFile) {
  std::string app = openAiApp(
      "maxRetries = 2\ninitialBackoffMillis = 1\nmaxBackoffMillis = 5\n"
      "headers = { \"OpenAI-Organization\" = \"${LOOM_TEST_ORG}\" }\n"
      "extraBody = { temperature = 0.25, max_tokens = 64 }\n"
      "\n[execution.retry]\nmaxAttempts = 1\n");  // the provider's own retries only
  std::vector<std::string> env = {"LOOM_TEST_ORG=org-hidden-7"};
  Outcome check = loom({"config", "check", app}, env);
  ASSERT_EQ(check.exitCode, 0) << check.out << check.err;
  EXPECT_EQ(check.out.find("org-hidden-7"), std::string::npos) << "a header value was shown";

  ChatServer::Reply busy{503, R"({"error":{"message":"overloaded"}})"};
  server_.push(busy);
  server_.push(busy);
  server_.push(answer("hi"));
  Outcome run = loom({"run", app, "--id", "ok", "--json"}, env);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.json().at("status"), "completed") << run.out;
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 3u) << "two retries, then the answer";
  for (const auto& r : requests) EXPECT_EQ(r.organization, "org-hidden-7");
  json::value body = server_.body(2);
  EXPECT_EQ(body.at("temperature").as_double(), 0.25);
  EXPECT_EQ(body.at("max_tokens").as_int64(), 64);
  EXPECT_EQ(body.at("model"), "test-model");

  for (int i = 0; i < 3; ++i) server_.push(busy);
  Outcome failed = loom({"run", app, "--id", "busy", "--json"}, env);
  EXPECT_EQ(server_.requests().size(), 6u) << "maxRetries = 2: three attempts in all";
  EXPECT_NE(failed.out.find("failed"), std::string::npos) << failed.out << failed.err;
}

TEST_F(ProviderOptions, RequestOptionsThatCannotWorkAreConfigErrorsNamingThePath) {
  std::string app = openAiApp(
      "headers = { \"Bad Name\" = \"x\", Authorization = \"Bearer y\" }\n"
      "extraBody = { model = \"other\" }\nmaxBackoffMillis = 1\n",
      "KEY");
  Outcome check = loom({"config", "check", app}, {"KEY=k"});
  EXPECT_NE(check.exitCode, 0);
  std::string all = check.out + check.err;
  for (const char* path : {"model.headers.Bad Name", "model.headers.Authorization",
                           "model.extraBody.model", "model.maxBackoffMillis"}) {
    EXPECT_NE(all.find(path), std::string::npos) << path << "\n" << all;
  }
  Outcome removed = loom({"config", "check",
                          write("old.toml",
                                "[observability]\nlogLevel = "
                                "\"debug\"\n")});
  EXPECT_NE(removed.exitCode, 0);
  EXPECT_NE((removed.out + removed.err).find("observability.logLevel"), std::string::npos);
}

// An MCP server that answers "where" with its working folder and "slow" after 3 seconds.
constexpr const char* kWhereServer = R"(#!/bin/sh
reply() { printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"; }
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      reply "$id" '{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"where","version":"1"}}' ;;
    *'"method":"tools/list"'*)
      reply "$id" '{"tools":[{"name":"lookup","inputSchema":{"type":"object"}}]}' ;;
    *'"topic":"slow"'*)
      sleep 3; reply "$id" '{"content":[{"type":"text","text":"late"}]}' ;;
    *'"method":"tools/call"'*)
      reply "$id" "{\"content\":[{\"type\":\"text\",\"text\":\"in $(pwd)\"}]}" ;;
  esac
done
)";

TEST_F(ProviderOptions, AnMcpServerRunsInItsWorkingFolderAndACallPastItsTimeoutFails) {
  std::filesystem::create_directories(dir_.path() / "data");
  std::string server = dir_ / "where.sh";
  writeExecutable(server, kWhereServer);
  write("script.json", R"({"turns": [
      {"toolCalls": [{"name": "lookup", "arguments": {"topic": "where"}}]},
      {"toolCalls": [{"name": "lookup", "arguments": {"topic": "slow"}}]},
      {"answer": "done"}]})");
  std::string app = write("app.toml",
                          "[agent]\nname = \"research\"\nprompt = \"Look.\"\n\n[model]\n"
                          "kind = \"scripted\"\nscript = \"script.json\"\n\n[[tools.mcp]]\n"
                          "name = \"where\"\ncommand = \"" +
                              server +
                              "\"\nworkingDirectory = \"data\"\ntimeoutMillis = 1000\n\n"
                              "[execution.retry.effects.lookup]\nmaxAttempts = 1\n");
  Outcome check = loom({"config", "check", app});
  ASSERT_EQ(check.exitCode, 0) << check.out << check.err;
  auto started = std::chrono::steady_clock::now();
  Outcome run = loom({"run", app, "--id", "mcp", "--json"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(3))
      << "the slow call was not cut at timeoutMillis";
  Outcome log = loom({"log", "mcp", "--json"});
  ASSERT_EQ(log.exitCode, 0) << log.err;
  std::string data = std::filesystem::canonical(dir_.path() / "data").string();
  EXPECT_NE(log.out.find("in " + data), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("1000 ms (timeoutMillis)"), std::string::npos) << log.out;
}

}  // namespace
}  // namespace loom::testing
