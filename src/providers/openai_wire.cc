#include "loom/providers/openai_wire.h"

#include <boost/json/parse.hpp>

#include "loom/util/error.h"

namespace loom::providers {
namespace {

constexpr std::size_t kMaxQuotedChars = 2000;

std::string textOf(const json::value& v) {
  if (const auto* s = v.if_string()) return std::string(*s);
  return json::toText(v);
}

std::string clip(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max)) + "…";
}

bool isParts(const json::value& v) {
  const auto* a = v.if_array();
  if (a == nullptr || a->empty()) return false;
  for (const auto& p : *a) {
    if (!p.is_object() || !p.get_object().contains("type")) return false;
  }
  return true;
}

std::string_view partType(const json::object& part) {
  const auto* t = part.if_contains("type");
  return t && t->is_string() ? std::string_view(t->get_string()) : std::string_view();
}

bool isImage(const json::object& part) { return partType(part) == "image"; }

json::object imageUrlPart(const json::object& part) {
  std::string url;
  if (const auto* u = part.if_contains("url"); u && u->is_string()) {
    url = std::string(u->get_string());
  } else {
    auto mime = json::optionalString(part, "mimeType").value_or("image/png");
    auto data = json::optionalString(part, "data").value_or("");
    url = "data:" + mime + ";base64," + data;
  }
  return json::object{{"type", "image_url"}, {"image_url", {{"url", url}}}};
}

// A part as text, for places that take text only (tool messages, non-image media).
std::string partText(const json::object& part) {
  std::string_view type = partType(part);
  if (type == "text") return textOf(part.contains("text") ? part.at("text") : json::value(""));
  if (type == "resource") {
    std::string out = "[resource " + json::optionalString(part, "uri").value_or("") + "]";
    if (auto text = json::optionalString(part, "text")) out += "\n" + *text;
    return out;
  }
  if (isImage(part)) {
    return "[image " + json::optionalString(part, "mimeType").value_or("") + "]";
  }
  return json::toText(part);
}

json::array contentParts(const json::array& parts) {
  json::array out;
  for (const auto& p : parts) {
    const auto& part = p.get_object();
    if (isImage(part)) {
      out.push_back(imageUrlPart(part));
    } else {
      out.push_back(json::object{{"type", "text"}, {"text", partText(part)}});
    }
  }
  return out;
}

json::value userContent(const json::value& content) {
  if (content.is_string()) return content;
  if (isParts(content)) return contentParts(content.get_array());
  return json::value(textOf(content));
}

json::object assistantMessage(const json::object& m) {
  json::object out{{"role", "assistant"}};
  const json::value* content = m.if_contains("content");
  const json::value* calls = m.if_contains("toolCalls");
  bool hasCalls = calls && calls->is_array() && !calls->get_array().empty();
  if (content && !content->is_null()) {
    out["content"] = textOf(*content);
  } else {
    out["content"] = hasCalls ? json::value(nullptr) : json::value("");
  }
  if (!hasCalls) return out;
  json::array toolCalls;
  for (const auto& c : calls->get_array()) {
    const auto& call = c.as_object();
    const json::value* args = call.if_contains("arguments");
    bool unusable = call.contains("argumentsError") || args == nullptr || args->is_null();
    toolCalls.push_back(json::object{
        {"id", call.at("id")},
        {"type", "function"},
        {"function",
         {{"name", call.at("name")}, {"arguments", unusable ? "{}" : json::toText(*args)}}}});
  }
  out["tool_calls"] = std::move(toolCalls);
  return out;
}

// Maps a tool message; its images (if any) go to `pendingImages` for the user message that
// follows the run of tool messages.
json::object toolMessage(const json::object& m, json::array& pendingImages) {
  std::string callId = json::optionalString(m, "toolCallId").value_or("");
  const json::value content = m.contains("content") ? m.at("content") : json::value("");
  std::string text;
  if (isParts(content)) {
    json::array images;
    for (const auto& p : content.get_array()) {
      const auto& part = p.get_object();
      if (!text.empty()) text += "\n";
      text += partText(part);
      if (isImage(part)) images.push_back(imageUrlPart(part));
    }
    if (!images.empty()) {
      text += "\n(the images follow in the next message)";
      pendingImages.push_back(
          json::object{{"type", "text"}, {"text", "Images returned by tool call " + callId + ":"}});
      for (auto& i : images) pendingImages.push_back(std::move(i));
    }
  } else {
    text = textOf(content);
  }
  return json::object{{"role", "tool"}, {"tool_call_id", callId}, {"content", text}};
}

json::array mapMessages(const json::SharedArray& messages) {
  json::array out;
  json::array pendingImages;
  auto flushImages = [&] {
    if (pendingImages.empty()) return;
    out.push_back(json::object{{"role", "user"}, {"content", std::move(pendingImages)}});
    pendingImages = json::array();
  };
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto* m = messages[i].if_object();
    const auto* role = m ? m->if_contains("role") : nullptr;
    if (role == nullptr || !role->is_string()) {
      throw InvalidArgumentError("messages[" + std::to_string(i) + "] has no string \"role\"");
    }
    std::string_view r = role->get_string();
    if (r != "tool") flushImages();
    const json::value content = m->contains("content") ? m->at("content") : json::value("");
    if (r == "system") {
      out.push_back(json::object{{"role", "system"}, {"content", textOf(content)}});
    } else if (r == "user") {
      out.push_back(json::object{{"role", "user"}, {"content", userContent(content)}});
    } else if (r == "assistant") {
      out.push_back(assistantMessage(*m));
    } else if (r == "tool") {
      out.push_back(toolMessage(*m, pendingImages));
    } else {
      throw InvalidArgumentError("messages[" + std::to_string(i) + "] has role \"" +
                                 std::string(r) +
                                 "\"; the chat-completions format knows system, user, "
                                 "assistant and tool");
    }
  }
  flushImages();
  return out;
}

json::array mapTools(const json::array& tools) {
  json::array out;
  for (const auto& t : tools) {
    const auto& tool = t.as_object();
    json::value parameters = json::object{{"type", "object"}, {"properties", json::object{}}};
    if (const auto* s = tool.if_contains("inputSchema"); s && s->is_object()) {
      json::object schema = s->get_object();
      schema.erase("$schema");  // some servers' grammar converters refuse unknown keywords
      parameters = std::move(schema);
    }
    json::object function{{"name", tool.at("name")}, {"parameters", std::move(parameters)}};
    if (const auto* d = tool.if_contains("description"); d && d->is_string()) {
      function["description"] = *d;
    }
    out.push_back(json::object{{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// The parsed arguments; sets `error` (and returns null) when the text is not JSON.
json::value parseArguments(const json::value& raw, std::string& error) {
  if (!raw.is_string()) return raw.is_null() ? json::value(json::object{}) : raw;
  std::string_view text = raw.get_string();
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return json::object{};
  boost::system::error_code ec;
  json::value v = boost::json::parse(text, ec);
  if (!ec) return v;
  error = "the arguments are not valid JSON (" + ec.message() + "): " + clip(text, kMaxQuotedChars);
  return nullptr;
}

json::array mapToolCalls(const json::array& calls, std::string_view endpoint) {
  json::array out;
  for (std::size_t j = 0; j < calls.size(); ++j) {
    const auto* c = calls[j].if_object();
    const auto* fn = c ? c->if_contains("function") : nullptr;
    const auto* name = fn && fn->is_object() ? fn->get_object().if_contains("name") : nullptr;
    if (name == nullptr || !name->is_string()) {
      throw InvalidArgumentError(std::string(endpoint) + " returned tool_calls[" +
                                 std::to_string(j) + "] without a function name");
    }
    json::object call;
    const auto* id = c->if_contains("id");
    call["id"] = id && id->is_string() && !id->get_string().empty()
                     ? *id
                     : json::value("call_" + std::to_string(j));
    call["name"] = *name;
    const auto* args = fn->get_object().if_contains("arguments");
    std::string error;
    call["arguments"] = parseArguments(args ? *args : json::value(nullptr), error);
    if (!error.empty()) call["argumentsError"] = error;
    out.push_back(std::move(call));
  }
  return out;
}

[[noreturn]] void notACompletion(std::string_view endpoint, const std::string& why,
                                 const json::value& body) {
  std::string server;
  if (const auto* o = body.if_object(); o && o->contains("error")) {
    server = "; the server said: " + serverErrorMessage(json::toText(body));
  }
  throw InvalidArgumentError(std::string(endpoint) + " returned a body that is not a chat " +
                             "completion (" + why + ")" + server +
                             "; check that baseUrl is the API root of an OpenAI-compatible "
                             "server (for example http://127.0.0.1:8080/v1)");
}

}  // namespace

json::object toChatCompletionsBody(const agent::ModelRequest& request,
                                   const ChatCompletionsWireOptions& options) {
  if (request.messages.empty()) {
    throw InvalidArgumentError("a model request needs a non-empty \"messages\" array");
  }
  json::object body = options.extraBody;
  body["model"] = options.model;
  body["messages"] = mapMessages(request.messages);
  body.erase("tools");
  body.erase("tool_choice");
  if (!request.tools.empty()) {
    body["tools"] = mapTools(request.tools);
    body["tool_choice"] = "auto";
  }
  return body;
}

json::value fromChatCompletionsBody(const json::value& body, std::string_view endpoint) {
  const auto* o = body.if_object();
  if (o == nullptr) notACompletion(endpoint, "a " + std::string(json::kindName(body)), body);
  const auto* choices = o->if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) {
    notACompletion(endpoint, "no \"choices\"", body);
  }
  const auto* choice = choices->get_array()[0].if_object();
  const auto* message = choice ? choice->if_contains("message") : nullptr;
  if (message == nullptr || !message->is_object()) {
    notACompletion(endpoint, "choices[0] has no \"message\"", body);
  }
  const auto& m = message->get_object();
  json::object out{{"role", "assistant"}};
  const json::value* content = m.if_contains("content");
  if (content == nullptr || content->is_null()) {
    out["content"] = nullptr;
  } else if (isParts(*content)) {
    std::string text;
    for (const auto& p : content->get_array()) text += partText(p.get_object());
    out["content"] = text;
  } else {
    out["content"] = textOf(*content);
  }
  if (const auto* calls = m.if_contains("tool_calls");
      calls && calls->is_array() && !calls->get_array().empty()) {
    out["toolCalls"] = mapToolCalls(calls->get_array(), endpoint);
  }
  if (const auto* reason = choice->if_contains("finish_reason"); reason && reason->is_string()) {
    out["finishReason"] = *reason;
  }
  if (const auto* usage = o->if_contains("usage"); usage && usage->is_object()) {
    const auto& u = usage->get_object();
    json::object tokens;
    if (const auto* in = u.if_contains("prompt_tokens"); in && in->is_number()) {
      tokens["inputTokens"] = *in;
    }
    if (const auto* outT = u.if_contains("completion_tokens"); outT && outT->is_number()) {
      tokens["outputTokens"] = *outT;
    }
    if (const auto* details = u.if_contains("prompt_tokens_details");
        details && details->is_object()) {
      if (const auto* cached = details->get_object().if_contains("cached_tokens");
          cached && cached->is_number()) {
        tokens["cachedInputTokens"] = *cached;
      }
    }
    if (!tokens.empty()) out["usage"] = std::move(tokens);
  }
  return out;
}

std::string serverErrorMessage(std::string_view body) {
  boost::system::error_code ec;
  json::value v = boost::json::parse(body, ec);
  if (!ec) {
    if (const auto* o = v.if_object()) {
      if (const auto* e = o->if_contains("error")) {
        if (const auto* eo = e->if_object()) {
          if (const auto* msg = eo->if_contains("message"); msg && msg->is_string()) {
            return clip(msg->get_string(), kMaxQuotedChars);
          }
        }
        return clip(textOf(*e), kMaxQuotedChars);
      }
      if (const auto* msg = o->if_contains("message"); msg && msg->is_string()) {
        return clip(msg->get_string(), kMaxQuotedChars);
      }
    }
  }
  if (body.empty()) return "(empty body)";
  return clip(body, 500);
}

}  // namespace loom::providers
