// Model SPI conformance (agent/model.h): every Model implementation runs this suite unchanged,
// instantiated once per implementation (model_conformance_implementations.cc: the scripted
// model, and the OpenAI-compatible model against a local chat-completions server; the Python
// package's python/tests/native: a model written in Python). A factory makes a model that
// answers turn i (the step id "<loop>#turn:<i>:model") as the test scripts it; what it asserts is
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
#include "loom/util/error.h"
#include "model_conformance.h"

namespace loom::agent::conformance {
namespace {

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

}  // namespace

TEST_P(ModelConformance, TheIdIsNonEmptyAndStable) {
  ModelMade made = GetParam().make({{"fine", "", {}}});
  ASSERT_FALSE(made.model->id().empty());
  std::string first = made.model->id();
  made.model->complete(turnContext(1), request());
  EXPECT_EQ(made.model->id(), first);
}

TEST_P(ModelConformance, AnAnswerIsAValidAssistantMessageWithItsText) {
  ModelMade made = GetParam().make({{"The answer is 42.", "", {}}});
  json::value out = made.model->complete(turnContext(1), request());
  EXPECT_NO_THROW(validateAssistantMessage(out, made.model->id()));
  EXPECT_EQ(out.as_object().at("role"), "assistant");
  EXPECT_EQ(out.as_object().at("content"), "The answer is 42.");
  auto calls = out.as_object().if_contains("toolCalls");
  EXPECT_TRUE(calls == nullptr || calls->as_array().empty()) << json::toText(out);
}

TEST_P(ModelConformance, AToolCallHasAnIdTheToolsNameAndObjectArguments) {
  ModelMade made = GetParam().make({{"", "lookup", {{"q", "churn"}, {"page", 2}}}, {"done", "", {}}});
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
  ModelMade made = GetParam().make(turns);
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
  ModelMade made = GetParam().makeUnavailable();
  EXPECT_THROW(made.model->complete(turnContext(1), request()), UnavailableError);
}

TEST_P(ModelConformance, AnAnswerItCannotGiveIsATypedErrorNamingTheModel) {
  ModelMade made = GetParam().makeMalformed();
  try {
    made.model->complete(turnContext(2), request());
    FAIL() << "a malformed completion was returned as an answer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()), "");
    EXPECT_FALSE(dynamic_cast<const UnavailableError*>(&e)) << "not retryable: " << e.what();
  }
}

}  // namespace loom::agent::conformance
