// The wire readers of the providers (providers/openai_wire.h, providers/mcp_client.h): a model
// server's reply body and an MCP server's CallToolResult are untrusted bytes.
#include "fuzz_support.h"
#include "loom/json/json.h"
#include "loom/providers/mcp_client.h"
#include "loom/providers/openai_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  std::string_view text = fuzz::textOf(data, size);
  providers::serverErrorMessage(text);
  fuzz::refusesOnlyWithTypedErrors([&] {
    json::value v = json::parse(text, "fuzz");
    fuzz::refusesOnlyWithTypedErrors([&] { providers::fromChatCompletionsBody(v, "fuzz"); });
    fuzz::refusesOnlyWithTypedErrors([&] { providers::mapMcpToolResult(v, "server", "tool"); });
  });
  return 0;
}
