// mapMcpToolResult: an MCP CallToolResult as a Loom tool result (mcp_client.h).
#include "loom/providers/mcp_client.h"
#include "loom/util/error.h"

namespace loom::providers {
namespace {

constexpr std::size_t kMaxErrorChars = 4000;

void copyIf(const json::object& from, json::object& to, std::string_view key) {
  if (const auto* v = from.if_contains(key); v && !v->is_null()) to[key] = *v;
}

json::object mapItem(const json::object& item) {
  std::string type = json::optionalString(item, "type").value_or("");
  if (type == "text") {
    return json::object{{"type", "text"}, {"text", item.contains("text") ? item.at("text") : ""}};
  }
  if (type == "image" || type == "audio") {
    json::object part{{"type", type}};
    copyIf(item, part, "mimeType");
    copyIf(item, part, "data");
    return part;
  }
  if (type == "resource") {
    json::object part{{"type", "resource"}};
    if (const auto* r = item.if_contains("resource"); r && r->is_object()) {
      for (std::string_view key : {"uri", "mimeType", "text", "blob"}) {
        copyIf(r->get_object(), part, key);
      }
    }
    return part;
  }
  if (type == "resource_link") {
    json::object part{{"type", "resource"}};
    for (std::string_view key : {"uri", "name", "mimeType", "description"}) {
      copyIf(item, part, key);
    }
    part["link"] = true;
    return part;
  }
  json::object part = item;  // a content type newer than this client: kept as the server sent it
  if (type.empty()) part["type"] = "unknown";
  return part;
}

}  // namespace

json::value mapMcpToolResult(const json::value& result, std::string_view server,
                             std::string_view tool) {
  const auto* o = result.if_object();
  if (o == nullptr) {
    throw DataLossError("MCP server '" + std::string(server) + "' answered tools/call of '" +
                        std::string(tool) + "' with a " + std::string(json::kindName(result)) +
                        ", not a result object");
  }
  json::array parts;
  std::string text;
  bool onlyText = true;
  if (const auto* content = o->if_contains("content"); content && content->is_array()) {
    for (const auto& item : content->get_array()) {
      if (!item.is_object()) continue;
      json::object part = mapItem(item.get_object());
      if (part.at("type") == "text") {
        if (!text.empty()) text += "\n";
        const auto& t = part.at("text");
        text += t.is_string() ? std::string(t.get_string()) : json::toText(t);
      } else {
        onlyText = false;
      }
      parts.push_back(std::move(part));
    }
  }
  if (const auto* isError = o->if_contains("isError");
      isError && isError->is_bool() && isError->get_bool()) {
    std::string why = text.empty() ? json::toText(parts) : text;
    if (why.size() > kMaxErrorChars) why = why.substr(0, kMaxErrorChars) + "…";
    throw InvalidArgumentError("MCP tool '" + std::string(tool) + "' on server '" +
                               std::string(server) + "' reported an error: " + why);
  }
  if (!onlyText) return json::object{{"parts", std::move(parts)}};
  if (const auto* structured = o->if_contains("structuredContent");
      structured && !structured->is_null()) {
    return *structured;
  }
  return json::value(text);
}

}  // namespace loom::providers
