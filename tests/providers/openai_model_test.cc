// OpenAiModel against a chat-completions server on 127.0.0.1: request shape and headers,
// retries with backoff on a ManualClock (429 with Retry-After, 5xx), typed errors for every
// other outcome, timeouts and refused connections.
#include "loom/providers/openai_model.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "loom/util/error.h"
#include "support/chat_server.h"

namespace loom::testing {
namespace {

using providers::OpenAiModel;
using providers::OpenAiModelOptions;

constexpr const char* kKeyEnv = "LOOM_TEST_OPENAI_KEY";
constexpr const char* kKey = "sk-test-7f3a9c1e5b";

// A loopback port nothing listens on: bound (never listened) to learn it, then closed.
int unusedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class OpenAiModelTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv(kKeyEnv, kKey, 1); }

  OpenAiModelOptions options() {
    OpenAiModelOptions o;
    o.baseUrl = server_.baseUrl();
    o.model = "test-model";
    o.apiKeyEnv = kKeyEnv;
    o.timeoutMillis = 5'000;
    o.maxRetries = 3;
    o.initialBackoffMillis = 100;
    o.maxBackoffMillis = 5'000;
    o.clock = clock_;
    return o;
  }

  json::value complete(OpenAiModel& model) {
    json::value request{
        {"messages", json::array{json::object{{"role", "user"}, {"content", "hi"}}}},
        {"tools", json::array{json::object{{"name", "lookup"}, {"description", "Looks up"}}}}};
    return model.complete({}, agent::ModelRequest::of({}, std::move(request)));
  }

  int64_t slept() const { return clock_->nowMillis() - start_; }

  ChatServer server_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  int64_t start_ = clock_->nowMillis();
};

TEST_F(OpenAiModelTest, PostsTheMappedBodyWithTheKeyAndParsesTheAnswer) {
  server_.push(answer("Hello!"));
  auto o = options();
  o.headers["OpenAI-Organization"] = "org-loom";
  o.extraBody["temperature"] = 0.2;
  OpenAiModel model(o);
  EXPECT_EQ(model.id(), "openai:test-model");
  EXPECT_EQ(model.endpoint(), server_.baseUrl() + "/chat/completions");
  json::value out = complete(model);
  EXPECT_EQ(out, (json::value{{"role", "assistant"},
                              {"content", "Hello!"},
                              {"finishReason", "stop"},
                              {"usage", {{"inputTokens", 120}, {"outputTokens", 8}}}}));
  ASSERT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(server_.requests()[0].authorization, std::string("Bearer ") + kKey);
  EXPECT_EQ(server_.requests()[0].organization, "org-loom");
  json::value body = server_.body(0);
  EXPECT_EQ(body.at("model"), "test-model");
  EXPECT_EQ(body.at("temperature"), 0.2);
  EXPECT_EQ(body.at("messages"), (json::array{json::object{{"role", "user"}, {"content", "hi"}}}));
  EXPECT_EQ(body.at("tools").at(0).at("type"), "function");
  EXPECT_EQ(body.at("tools").at(0).at("function").at("parameters"),
            (json::value{{"type", "object"}, {"properties", json::object{}}}));
  EXPECT_EQ(body.at("tool_choice"), "auto");
  EXPECT_EQ(slept(), 0);

  o.id = "local";
  o.apiKeyEnv = "";
  server_.push(answer("no key"));
  OpenAiModel keyless(o);
  EXPECT_EQ(keyless.id(), "local");
  complete(keyless);
  EXPECT_EQ(server_.requests().back().authorization, "");
}

TEST_F(OpenAiModelTest, A429WaitsForRetryAfterThenSucceeds) {
  server_.push({429, R"({"error":{"message":"Rate limit reached"}})", {{"Retry-After", "2"}}});
  server_.push(answer("after the wait"));
  OpenAiModel model(options());
  EXPECT_EQ(complete(model).at("content"), "after the wait");
  EXPECT_EQ(server_.requests().size(), 2u);
  EXPECT_EQ(slept(), 2'000);
}

TEST_F(OpenAiModelTest, A5xxIsRetriedWithExponentialBackoff) {
  server_.push({500, R"({"error":{"message":"boom"}})"});
  server_.push({502, "<html>Bad Gateway</html>"});  // malformed bodies of a 5xx are not parsed
  server_.push(answer("third time"));
  OpenAiModel model(options());
  EXPECT_EQ(complete(model).at("content"), "third time");
  EXPECT_EQ(slept(), 100 + 200);
}

TEST_F(OpenAiModelTest, APersistent5xxIsUnavailableAfterTheRetries) {
  for (int i = 0; i < 4; ++i) server_.push({503, R"({"error":{"message":"overloaded"}})"});
  OpenAiModel model(options());
  try {
    complete(model);
    FAIL() << "expected UnavailableError";
  } catch (const UnavailableError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("failed 4 time(s), last with 503 (overloaded)"), std::string::npos) << what;
  }
  EXPECT_EQ(server_.requests().size(), 4u);
  EXPECT_EQ(slept(), 100 + 200 + 400);
}

TEST_F(OpenAiModelTest, ARetryAfterLongerThanTheBackoffCapGivesUpAtOnce) {
  server_.push({429, R"({"error":{"message":"quota"}})", {{"Retry-After", "3600"}}});
  OpenAiModel model(options());
  try {
    complete(model);
    FAIL();
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("asked to retry after 3600000 ms"), std::string::npos);
  }
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(slept(), 0);
}

TEST_F(OpenAiModelTest, A401NamesTheKeyVariableAndNeverTheKey) {
  server_.push(
      {401, std::string(R"({"error":{"message":"Incorrect API key provided: )") + kKey + "\"}}"});
  OpenAiModel model(options());
  try {
    complete(model);
    FAIL();
  } catch (const FailedPreconditionError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(kKeyEnv), std::string::npos) << what;
    EXPECT_NE(what.find("Incorrect API key provided: [redacted]"), std::string::npos) << what;
    EXPECT_EQ(what.find(kKey), std::string::npos) << what;
  }
  EXPECT_EQ(server_.requests().size(), 1u) << "a 401 is not retried";
}

TEST_F(OpenAiModelTest, OtherStatusesAreInvalidArgumentsWithTheServersMessage) {
  server_.push({400, R"({"error":{"message":"'messages' is too long"}})"});
  server_.push({404, R"({"error":"model 'test-model' not found, try pulling it first"})"});
  OpenAiModel model(options());
  for (const char* expected :
       {"returned 400: 'messages' is too long", "model 'test-model' not found"}) {
    try {
      complete(model);
      FAIL() << expected;
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST_F(OpenAiModelTest, AMalformedSuccessBodyIsAnInvalidArgumentNamingTheEndpoint) {
  server_.push({200, "{\"choices\": [ {\"message\": "});
  server_.push({200, R"({"object":"list","data":[]})"});
  OpenAiModel model(options());
  for (int i = 0; i < 2; ++i) {
    try {
      complete(model);
      FAIL();
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(model.endpoint()), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(server_.requests().size(), 2u) << "not retried";
}

TEST_F(OpenAiModelTest, NoAnswerWithinTheTimeoutIsADeadline) {
  server_.push({200, "{}", {}, 1'500});
  auto o = options();
  o.timeoutMillis = 300;
  OpenAiModel model(o);
  EXPECT_THROW(complete(model), DeadlineExceededError);
}

TEST_F(OpenAiModelTest, ARefusedConnectionIsUnavailableNamingTheUrl) {
  int port = unusedPort();
  auto o = options();
  o.baseUrl = "http://127.0.0.1:" + std::to_string(port) + "/v1/";
  OpenAiModel model(o);
  try {
    complete(model);
    FAIL();
  } catch (const UnavailableError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("http://127.0.0.1:" + std::to_string(port) + "/v1/chat/completions"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("failed 4 time(s)"), std::string::npos) << what;
    EXPECT_NE(what.find(": could not connect; is the server running and reachable?"),
              std::string::npos)
        << "in words, not httplib's bare \"Connection\": " << what;
  }
  EXPECT_EQ(slept(), 100 + 200 + 400);
}

TEST_F(OpenAiModelTest, OptionsAreCheckedAtConstruction) {
  auto o = options();
  o.apiKeyEnv = "LOOM_TEST_UNSET_KEY_VARIABLE";
  ::unsetenv(o.apiKeyEnv.c_str());
  try {
    OpenAiModel model(o);
    FAIL();
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("LOOM_TEST_UNSET_KEY_VARIABLE"), std::string::npos);
  }
  o = options();
  o.baseUrl = "localhost:8080/v1";
  EXPECT_THROW(OpenAiModel{o}, InvalidArgumentError);
  o = options();
  o.model = "";
  EXPECT_THROW(OpenAiModel{o}, InvalidArgumentError);
}

}  // namespace
}  // namespace loom::testing
