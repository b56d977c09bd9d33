// The implementations that run the Model conformance suite (model_conformance.cc).
#include <memory>

#include "loom/providers/openai_model.h"
#include "loom/providers/scripted_model.h"
#include "model_conformance.h"
#include "support/chat_server.h"

namespace loom::agent::conformance {
namespace {

using loom::testing::answer;
using loom::testing::ChatServer;
using loom::testing::completion;
using loom::testing::toolCall;

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
            return ModelMade{std::make_shared<providers::ScriptedModel>("scripted", scriptOf(turns)),
                        nullptr};
          },
          nullptr,
          [] {  // a script of one turn answers no second turn
            return ModelMade{std::make_shared<providers::ScriptedModel>(
                            "scripted", scriptOf({{"only turn 1", "", {}}})),
                        nullptr};
          }};
}

ModelMade openAiOver(std::shared_ptr<ChatServer> server) {
  providers::OpenAiModelOptions o;
  o.baseUrl = server->baseUrl();
  o.model = "conformance-model";
  o.apiKeyEnv = "";
  o.timeoutMillis = 5'000;
  o.maxRetries = 0;
  return ModelMade{std::make_shared<providers::OpenAiModel>(o), server};
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
