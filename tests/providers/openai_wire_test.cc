// The chat-completions wire mapping, both ways, without a server.
#include "loom/providers/openai_wire.h"

#include <gtest/gtest.h>

#include "loom/util/error.h"

namespace loom::testing {
namespace {

using providers::fromChatCompletionsBody;
using providers::toChatCompletionsBody;

agent::ModelRequest req(json::value request) {
  return agent::ModelRequest::of({}, std::move(request));
}

const json::value kImage{{"type", "image"}, {"mimeType", "image/png"}, {"data", "iVBORw0K"}};

TEST(OpenAiWire, MapsEveryMessageKindAndTheTools) {
  json::value request{
      {"messages",
       json::array{
           json::object{{"role", "system"}, {"content", "Be brief."}},
           json::object{{"role", "user"}, {"content", {{"task", "report"}}}},
           json::object{
               {"role", "assistant"},
               {"content", nullptr},
               {"toolCalls",
                json::array{
                    json::object{{"id", "c1"}, {"name", "shot"}, {"arguments", {{"page", 1}}}},
                    json::object{{"id", "c2"},
                                 {"name", "shot"},
                                 {"arguments", nullptr},
                                 {"argumentsError", "not JSON: {page"}}}}},
           json::object{{"role", "tool"},
                        {"toolCallId", "c1"},
                        {"content",
                         json::array{json::object{{"type", "text"}, {"text", "page 1"}}, kImage}}},
           json::object{{"role", "tool"},
                        {"toolCallId", "c2"},
                        {"content", {{"error", "bad"}}},
                        {"isError", true}},
           json::object{{"role", "user"}, {"content", "go on"}, {"summary", true}}}},
      {"tools", json::array{json::object{{"name", "shot"},
                                         {"description", "Screenshot a page"},
                                         {"inputSchema",
                                          {{"$schema", "http://json-schema.org/draft-07/schema#"},
                                           {"type", "object"},
                                           {"properties", {{"page", {{"type", "integer"}}}}}}}}}},
      {"purpose", "turn"}};
  json::object body =
      toChatCompletionsBody(req(request), {"m1", json::object{{"temperature", 0}, {"model", "x"}}});
  EXPECT_EQ(body.at("model"), "m1");
  EXPECT_EQ(body.at("temperature"), 0);
  const auto& m = body.at("messages").as_array();
  ASSERT_EQ(m.size(), 7u);
  EXPECT_EQ(m[0], (json::value{{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(m[1].at("content"), R"({"task":"report"})");
  EXPECT_TRUE(m[2].at("content").is_null());
  EXPECT_EQ(m[2].at("tool_calls").at(0),
            (json::value{{"id", "c1"},
                         {"type", "function"},
                         {"function", {{"name", "shot"}, {"arguments", R"({"page":1})"}}}}));
  EXPECT_EQ(m[2].at("tool_calls").at(1).at("function").at("arguments"), "{}");
  // Tool messages carry text only; the image follows them in one user message.
  EXPECT_EQ(m[3].at("role"), "tool");
  EXPECT_EQ(m[3].at("tool_call_id"), "c1");
  EXPECT_EQ(m[3].at("content").as_string(),
            "page 1\n[image image/png]\n(the images follow in the next message)");
  EXPECT_EQ(
      m[4],
      (json::value{{"role", "tool"}, {"tool_call_id", "c2"}, {"content", R"({"error":"bad"})"}}));
  EXPECT_EQ(m[5].at("role"), "user");
  EXPECT_EQ(m[5].at("content").at(1),
            (json::value{{"type", "image_url"},
                         {"image_url", {{"url", "data:image/png;base64,iVBORw0K"}}}}));
  EXPECT_EQ(m[6], (json::value{{"role", "user"}, {"content", "go on"}}));
  EXPECT_EQ(body.at("tool_choice"), "auto");
  const auto& fn = body.at("tools").at(0).at("function").as_object();
  EXPECT_EQ(fn.at("name"), "shot");
  EXPECT_EQ(fn.at("description"), "Screenshot a page");
  EXPECT_FALSE(fn.at("parameters").as_object().contains("$schema"));
  EXPECT_EQ(fn.at("parameters").at("properties").at("page").at("type"), "integer");
}

TEST(OpenAiWire, NoToolsMeansNoToolChoiceAndUserMediaBecomesContentParts) {
  json::value request{
      {"messages",
       json::array{json::object{
           {"role", "user"},
           {"content",
            json::array{json::object{{"type", "text"}, {"text", "what is this?"}}, kImage}}}}},
      {"tools", json::array{}}};
  json::object body = toChatCompletionsBody(req(request), {"m", {}});
  EXPECT_FALSE(body.contains("tools"));
  EXPECT_FALSE(body.contains("tool_choice"));
  EXPECT_EQ(body.at("messages").at(0).at("content").at(0),
            (json::value{{"type", "text"}, {"text", "what is this?"}}));
  EXPECT_EQ(body.at("messages").at(0).at("content").at(1).at("type"), "image_url");
  EXPECT_THROW(toChatCompletionsBody(req(json::value{{"messages", json::array{}}}), {"m", {}}),
               InvalidArgumentError);
  EXPECT_THROW(
      toChatCompletionsBody(
          req(json::value{{"messages", json::array{json::object{{"role", "critic"}}}}}), {"m", {}}),
      InvalidArgumentError);
}

TEST(OpenAiWire, ParsesToolCallsUsageAndFinishReasonAndKeepsBadArguments) {
  json::value body{
      {"choices",
       json::array{json::object{
           {"message",
            {{"role", "assistant"},
             {"content", nullptr},
             {"tool_calls",
              json::array{json::object{{"id", "a"},
                                       {"type", "function"},
                                       {"function", {{"name", "f"}, {"arguments", R"({"x":1})"}}}},
                          json::object{{"id", "b"},
                                       {"type", "function"},
                                       {"function", {{"name", "g"}, {"arguments", ""}}}},
                          json::object{{"type", "function"},
                                       {"function", {{"name", "h"}, {"arguments", "{x: 1"}}}}}}}},
           {"finish_reason", "tool_calls"}}}},
      {"usage", {{"prompt_tokens", 50}, {"completion_tokens", 7}}}};
  json::value m = fromChatCompletionsBody(body, "http://h/v1/chat/completions");
  EXPECT_EQ(m.at("role"), "assistant");
  EXPECT_TRUE(m.at("content").is_null());
  EXPECT_EQ(m.at("finishReason"), "tool_calls");
  EXPECT_EQ(m.at("usage"), (json::value{{"inputTokens", 50}, {"outputTokens", 7}}));
  const auto& calls = m.at("toolCalls").as_array();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0], (json::value{{"id", "a"}, {"name", "f"}, {"arguments", {{"x", 1}}}}));
  EXPECT_EQ(calls[1].at("arguments"), json::object{});
  EXPECT_EQ(calls[2].at("id"), "call_2");
  EXPECT_TRUE(calls[2].at("arguments").is_null());
  std::string error(calls[2].at("argumentsError").as_string());
  EXPECT_NE(error.find("not valid JSON"), std::string::npos);
  EXPECT_NE(error.find("{x: 1"), std::string::npos) << "the raw text is quoted for the model";
}

TEST(OpenAiWire, ABodyThatIsNotACompletionNamesTheEndpoint) {
  for (const json::value& body :
       {json::value(json::array{}), json::value{{"choices", json::array{}}},
        json::value{{"error", {{"message", "model not loaded"}}}}}) {
    try {
      fromChatCompletionsBody(body, "http://h:1/v1/chat/completions");
      FAIL() << json::toText(body);
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("http://h:1/v1/chat/completions"), std::string::npos);
    }
  }
  EXPECT_EQ(providers::serverErrorMessage(R"({"error":{"message":"Invalid model"}})"),
            "Invalid model");
  EXPECT_EQ(providers::serverErrorMessage(R"({"error":"model 'x' not found"})"),
            "model 'x' not found");
  EXPECT_EQ(providers::serverErrorMessage("<html>Bad Gateway</html>"), "<html>Bad Gateway</html>");
}

}  // namespace
}  // namespace loom::testing
