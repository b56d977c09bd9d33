// Model SPI conformance (agent/model.h): every Model implementation runs this suite unchanged,
// instantiated at the end once per implementation (the scripted model, and the OpenAI-compatible
// model against a local chat-completions server). A factory makes a model that answers turn
// i (the step id "<loop>#turn:<i>:model") as the test scripts it; what the suite asserts is
// what the agent loop relies on: a stable id, valid assistant messages, tool calls with an id,
// a name and object arguments, thread safety, and typed errors for faults.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "loom/agent/model.h"
#include "loom/providers/openai_model.h"
#include "loom/providers/scripted_model.h"
#include "loom/util/error.h"
#include "support/chat_server.h"

namespace loom::agent::conformance {
namespace {

using loom::testing::answer;
using loom::testing::ChatServer;
using loom::testing::completion;
using loom::testing::toolCall;

// What one turn of the model says: an answer, or one call of `tool` with `arguments`.
struct Turn {
  std::string answer;
  std::string tool;
  json::object arguments;
};

// A model under test and whatever must outlive it (a server).
struct Made {
  std::shared_ptr<Model> model;
  std::shared_ptr<void> keepAlive;
  ~Made() { model.reset(); }  // the model (its connections) goes before its server
};

struct ModelFactory {
  std::string name;
  // A model whose turn i (from 1) says turns[i - 1].
  std::function<Made(const std::vector<Turn>& turns)> make;
  // A model whose next completion meets a retryable fault (a server that answers 503); null
  // when the implementation has none.
  std::function<Made()> makeUnavailable;
  // A model whose completion of turn 2 cannot be a valid answer (a reply that is not a chat
  // completion; a turn past the script).
  std::function<Made()> makeMalformed;
};

agent::ModelRequest request() {
  return agent::ModelRequest::of(
      {}, json::value{
              {"messages", json::array{json::object{{"role", "user"}, {"content", "hi"}}}},
              {"tools", json::array{json::object{{"name", "lookup"}, {"description", "Looks up"}}}},
              {"purpose", "turn"}});
}

effects::EffectContext turnContext(int turn) {
  effects::EffectContext ctx;
  ctx.executionId = "model-conformance";
  ctx.stepId = "agent#turn:" + std::to_string(turn) + ":model";
  ctx.taskKind = "llm";
  return ctx;
}

class ModelConformance : public ::testing::TestWithParam<ModelFactory> {};

TEST_P(ModelConformance, TheIdIsNonEmptyAndStable) {
  Made made = GetParam().make({{"fine", "", {}}});
  ASSERT_FALSE(made.model->id().empty());
  std::string first = made.model->id();
  made.model->complete(turnContext(1), request());
  EXPECT_EQ(made.model->id(), first);
}

TEST_P(ModelConformance, AnAnswerIsAValidAssistantMessageWithItsText) {
  Made made = GetParam().make({{"The answer is 42.", "", {}}});
  json::value out = made.model->complete(turnContext(1), request());
  EXPECT_NO_THROW(validateAssistantMessage(out, made.model->id()));
  EXPECT_EQ(out.as_object().at("role"), "assistant");
  EXPECT_EQ(out.as_object().at("content"), "The answer is 42.");
  auto calls = out.as_object().if_contains("toolCalls");
  EXPECT_TRUE(calls == nullptr || calls->as_array().empty()) << json::toText(out);
}

TEST_P(ModelConformance, AToolCallHasAnIdTheToolsNameAndObjectArguments) {
  Made made = GetParam().make({{"", "lookup", {{"q", "churn"}, {"page", 2}}}, {"done", "", {}}});
  json::value out = made.model->complete(turnContext(1), request());
  EXPECT_NO_THROW(validateAssistantMessage(out, made.model->id()));
  const auto& calls = out.as_object().at("toolCalls").as_array();
  ASSERT_EQ(calls.size(), 1u) << json::toText(out);
  const auto& call = calls[0].as_object();
  EXPECT_FALSE(call.at("id").as_string().empty());
  EXPECT_EQ(call.at("name"), "lookup");
  EXPECT_EQ(call.at("arguments"), (json::value{{"q", "churn"}, {"page", 2}}));
  json::value next = made.model->complete(turnContext(2), request());
  EXPECT_EQ(next.as_object().at("content"), "done");
}

TEST_P(ModelConformance, ConcurrentCompletionsAreEachAValidAnswer) {
  constexpr int kThreads = 8;
  std::vector<Turn> turns(kThreads, Turn{"same answer", "", {}});
  Made made = GetParam().make(turns);
  std::vector<std::optional<json::value>> outs(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { outs[i] = made.model->complete(turnContext(i + 1), request()); });
  }
  for (auto& t : threads) t.join();
  for (const auto& out : outs) {
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(out->as_object().at("content"), "same answer");
  }
}

TEST_P(ModelConformance, ARetryableFaultIsAnUnavailableError) {
  if (!GetParam().makeUnavailable) GTEST_SKIP() << "this model has no retryable fault";
  Made made = GetParam().makeUnavailable();
  EXPECT_THROW(made.model->complete(turnContext(1), request()), UnavailableError);
}

TEST_P(ModelConformance, AnAnswerItCannotGiveIsATypedErrorNamingTheModel) {
  Made made = GetParam().makeMalformed();
  try {
    made.model->complete(turnContext(2), request());
    FAIL() << "a malformed completion was returned as an answer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()), "");
    EXPECT_FALSE(dynamic_cast<const UnavailableError*>(&e)) << "not retryable: " << e.what();
  }
}

// --- implementations ---------------------------------------------------------------------

json::value scriptOf(const std::vector<Turn>& turns) {
  json::array out;
  for (const auto& t : turns) {
    if (t.tool.empty()) {
      out.emplace_back(json::object{{"answer", t.answer}});
    } else {
      out.emplace_back(json::object{
          {"toolCalls", json::array{json::object{{"name", t.tool}, {"arguments", t.arguments}}}}});
    }
  }
  return json::object{{"turns", std::move(out)}};
}

ModelFactory scripted() {
  return {"Scripted",
          [](const std::vector<Turn>& turns) {
            return Made{std::make_shared<providers::ScriptedModel>("scripted", scriptOf(turns)),
                        nullptr};
          },
          nullptr,
          [] {  // a script of one turn answers no second turn
            return Made{std::make_shared<providers::ScriptedModel>(
                            "scripted", scriptOf({{"only turn 1", "", {}}})),
                        nullptr};
          }};
}

Made openAiOver(std::shared_ptr<ChatServer> server) {
  providers::OpenAiModelOptions o;
  o.baseUrl = server->baseUrl();
  o.model = "conformance-model";
  o.apiKeyEnv = "";
  o.timeoutMillis = 5'000;
  o.maxRetries = 0;
  return Made{std::make_shared<providers::OpenAiModel>(o), server};
}

ModelFactory openAi() {
  return {"OpenAiCompatible",
          [](const std::vector<Turn>& turns) {
            auto server = std::make_shared<ChatServer>();
            int n = 0;
            for (const auto& t : turns) {
              if (t.tool.empty()) {
                server->push(answer(t.answer));
              } else {
                server->push(completion(
                    json::object{
                        {"role", "assistant"},
                        {"content", nullptr},
                        {"tool_calls", json::array{toolCall("call_" + std::to_string(++n), t.tool,
                                                            json::toText(t.arguments))}}},
                    "tool_calls"));
              }
            }
            return openAiOver(server);
          },
          [] {
            auto server = std::make_shared<ChatServer>();
            server->push({503, R"({"error":{"message":"overloaded"}})"});
            return openAiOver(server);
          },
          [] {
            auto server = std::make_shared<ChatServer>();
            server->push({200, R"({"choices": []})"});
            return openAiOver(server);
          }};
}

INSTANTIATE_TEST_SUITE_P(Models, ModelConformance, ::testing::Values(scripted(), openAi()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace loom::agent::conformance
