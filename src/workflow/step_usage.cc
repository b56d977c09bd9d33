#include "step_usage.h"

#include "loom/effects/taint.h"
#include "loom/util/error.h"

namespace loom::workflow {

std::optional<json::object> recordedUsage(
    std::string_view modelId, const json::value& output,
    const std::map<std::string, kernel::ModelPrice>& prices) {
  const json::value& message = effects::untainted(output);
  const auto* reported = message.is_object() ? message.get_object().if_contains("usage") : nullptr;
  if (reported == nullptr || !reported->is_object()) return std::nullopt;
  json::object usage{{"model", modelId}};
  for (std::string_view key : {"inputTokens", "outputTokens", "cachedInputTokens"}) {
    if (const auto* n = reported->get_object().if_contains(key)) usage[key] = *n;
  }
  try {
    json::object data{{"usage", usage}};
    std::optional<kernel::TokenUsage> tokens = kernel::stepUsage(data);  // validates
    auto price = prices.find(std::string(modelId));
    if (price != prices.end()) {
      usage["costUsd"] = kernel::usdOf(kernel::costNanoUsd(price->second, *tokens));
    }
  } catch (const InvalidArgumentError&) {
    return std::nullopt;  // not numbers Loom can add up: recorded inside the message only
  }
  return usage;
}

}  // namespace loom::workflow
