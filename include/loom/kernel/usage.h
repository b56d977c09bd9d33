// Model usage (docs/spec/events.md, STEP_COMPLETED "usage"; docs/observability.md): a model
// step records what its server reported (tokens in, out, of them cached) and what that cost
// by the price table when it was recorded. Stores sum it into each run's metadata
// (ExecutionInfo::usage), so totals never read a log and a replay never counts a step twice.
// Values; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "loom/json/json.h"

namespace loom::kernel {

struct TokenUsage {
  int64_t inputTokens = 0;
  int64_t outputTokens = 0;
  int64_t cachedInputTokens = 0;  // of inputTokens, read from the server's cache
  int64_t costNanoUsd = 0;        // 1e-9 USD: 0 when no price was known
  int64_t modelTurns = 0;         // model steps that reported usage

  int64_t tokens() const { return inputTokens + outputTokens; }
  void add(const TokenUsage& other);
  bool operator==(const TokenUsage&) const = default;
};

// The largest token count or cost a step may record: a server that reports more is refused.
inline constexpr int64_t kMaxStepTokens = int64_t{1} << 40;
inline constexpr double kMaxStepCostUsd = 1e6;

// A STEP_COMPLETED's "usage" member: {"model", "inputTokens", "outputTokens",
// "cachedInputTokens"?, "costUsd"?}. Throws InvalidArgumentError naming the field.
void validateStepUsage(const json::value& usage);
// The usage it records, one model turn; nullopt when the event has none. Validates it.
std::optional<TokenUsage> stepUsage(const json::object& stepCompletedData);
// The member's fields in one fixed text (bound into a sealed step's associated data).
std::string stepUsageText(const json::object& usage);

// A model's price (observability.prices): USD per million tokens; cached input at its own
// price when given, else at the input price.
struct ModelPrice {
  double input = 0;
  double output = 0;
  std::optional<double> cachedInput;
};
// What `usage` (one step's tokens) costs at `price`, in 1e-9 USD.
int64_t costNanoUsd(const ModelPrice& price, const TokenUsage& usage);

int64_t nanoUsdOf(double usd);
double usdOf(int64_t nanoUsd);

// {"inputTokens", "outputTokens", "cachedInputTokens", "tokens", "costUsd", "modelTurns"}.
json::object toJson(const TokenUsage& usage);
// The inverse (what Loom wrote in a snapshot or checkpoint); InvalidArgumentError naming the
// member that is missing or negative.
TokenUsage usageFromJson(const json::object& o);

}  // namespace loom::kernel
