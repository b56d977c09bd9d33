// The OpenAI chat-completions wire format, apart from any transport: maps a Loom model request
// (agent/model.h) to the JSON body of POST {baseUrl}/chat/completions, and a response body back
// to a Loom assistant message. Used by OpenAiModel; tests and tools may call it directly.
// Pure functions, thread-safe.
//
// Request mapping:
//   system/user messages   -> {"role", "content"}; string content as is, media parts
//                             ({"type":"image","mimeType","data"}) as image_url data URLs,
//                             any other value as its JSON text
//   assistant messages     -> {"role":"assistant","content","tool_calls":[{"id","type":"function",
//                             "function":{"name","arguments":<JSON text>}}]}; a call whose
//                             arguments did not parse is sent back with arguments "{}" (some
//                             servers re-parse them and would reject the raw text)
//   tool messages          -> {"role":"tool","tool_call_id","content":<string>}; media parts are
//                             listed in the text and their images follow, after the run of tool
//                             messages, in one user message (tool messages cannot carry images)
//   tools                  -> [{"type":"function","function":{"name","description","parameters"}}]
//                             and "tool_choice":"auto" when there is at least one tool
// Response mapping: choices[0].message -> {"role":"assistant","content","toolCalls"?,
//   "finishReason"?, "usage"?: {"inputTokens","outputTokens"}}. Tool-call arguments that are
//   not valid JSON keep the call as {"id","name","arguments":null,"argumentsError": "..."}, so
//   the agent loop tells the model instead of running the tool.
#pragma once

#include <string>
#include <string_view>

#include "loom/agent/model.h"
#include "loom/json/json.h"

namespace loom::providers {

struct ChatCompletionsWireOptions {
  std::string model;       // the "model" member of the body
  json::object extraBody;  // merged into the body first (temperature, max_tokens, ...); the
                           // mapped members (model, messages, tools, tool_choice) win
};

// The request body for a Loom model request. Throws InvalidArgumentError naming the message
// that cannot be mapped (unknown role, no messages).
json::object toChatCompletionsBody(const agent::ModelRequest& request,
                                   const ChatCompletionsWireOptions& options);

// The Loom assistant message of a chat-completions response body. `endpoint` names the URL in
// errors. Throws InvalidArgumentError when the body is not a chat completion (no choices, no
// message): usually baseUrl points at something that is not an OpenAI-compatible API root.
json::value fromChatCompletionsBody(const json::value& body, std::string_view endpoint);

// The error text a server put in an error body: OpenAI's {"error":{"message"}}, Ollama's
// {"error": "..."}, a bare {"message"}, or else the start of the raw text.
std::string serverErrorMessage(std::string_view body);

}  // namespace loom::providers
