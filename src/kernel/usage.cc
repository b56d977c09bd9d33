#include "loom/kernel/usage.h"

#include <algorithm>
#include <cmath>

#include "loom/util/error.h"

namespace loom::kernel {
namespace {

int64_t tokensOf(const json::object& u, std::string_view key, bool required) {
  const auto* v = u.if_contains(key);
  if (v == nullptr) {
    if (required) throw InvalidArgumentError("usage lacks '" + std::string(key) + "'");
    return 0;
  }
  if (!v->is_int64() && !v->is_uint64()) {
    throw InvalidArgumentError("usage '" + std::string(key) + "' must be a whole number");
  }
  const bool inRange = v->is_int64() ? v->get_int64() >= 0 && v->get_int64() <= kMaxStepTokens
                                     : v->get_uint64() <= uint64_t(kMaxStepTokens);
  if (!inRange) {
    throw InvalidArgumentError("usage '" + std::string(key) + "' must be from 0 to " +
                               std::to_string(kMaxStepTokens));
  }
  return v->is_int64() ? v->get_int64() : int64_t(v->get_uint64());
}

double costOf(const json::object& u) {
  const auto* v = u.if_contains("costUsd");
  if (v == nullptr) return 0;
  if (!v->is_number()) throw InvalidArgumentError("usage 'costUsd' must be a number");
  double usd = v->to_number<double>();
  if (!(usd >= 0 && usd <= kMaxStepCostUsd)) {
    throw InvalidArgumentError("usage 'costUsd' must be from 0 to " +
                               std::to_string(int64_t(kMaxStepCostUsd)));
  }
  return usd;
}

}  // namespace

void TokenUsage::add(const TokenUsage& o) {
  inputTokens += o.inputTokens;
  outputTokens += o.outputTokens;
  cachedInputTokens += o.cachedInputTokens;
  costNanoUsd += o.costNanoUsd;
  modelTurns += o.modelTurns;
}

void validateStepUsage(const json::value& usage) {
  if (!usage.is_object()) throw InvalidArgumentError("field 'usage' must be an object");
  const auto& u = usage.get_object();
  for (const auto& kv : u) {
    std::string_view k = kv.key();
    if (k != "model" && k != "inputTokens" && k != "outputTokens" && k != "cachedInputTokens" &&
        k != "costUsd") {
      throw InvalidArgumentError("usage has an unknown field '" + std::string(k) + "'");
    }
  }
  const auto* model = u.if_contains("model");
  if (model == nullptr || !model->is_string()) {
    throw InvalidArgumentError("usage lacks the string 'model'");
  }
  tokensOf(u, "inputTokens", true);
  tokensOf(u, "outputTokens", true);
  if (tokensOf(u, "cachedInputTokens", false) > tokensOf(u, "inputTokens", true)) {
    throw InvalidArgumentError("usage 'cachedInputTokens' exceeds 'inputTokens'");
  }
  costOf(u);
}

std::optional<TokenUsage> stepUsage(const json::object& data) {
  const auto* usage = data.if_contains("usage");
  if (usage == nullptr) return std::nullopt;
  validateStepUsage(*usage);
  const auto& u = usage->get_object();
  return TokenUsage{tokensOf(u, "inputTokens", true), tokensOf(u, "outputTokens", true),
                    tokensOf(u, "cachedInputTokens", false), nanoUsdOf(costOf(u)), 1};
}

std::string stepUsageText(const json::object& u) {
  const auto* model = u.if_contains("model");
  std::string text = model != nullptr && model->is_string() ? std::string(model->get_string())
                                                            : std::string();
  for (std::string_view key : {"inputTokens", "outputTokens", "cachedInputTokens"}) {
    const auto* v = u.if_contains(key);
    text += "," + (v != nullptr ? json::toText(*v) : std::string("-"));
  }
  const auto* cost = u.if_contains("costUsd");
  text += "," + (cost != nullptr && cost->is_number()
                     ? std::to_string(nanoUsdOf(cost->to_number<double>()))
                     : std::string("-"));
  return text;
}

int64_t costNanoUsd(const ModelPrice& price, const TokenUsage& u) {
  const int64_t cached = std::min(u.cachedInputTokens, u.inputTokens);
  const double perToken =  // USD per million tokens -> nano-USD per token: x 1e3
      double(u.inputTokens - cached) * price.input + double(u.outputTokens) * price.output +
      double(cached) * price.cachedInput.value_or(price.input);
  return std::llround(perToken * 1e3);
}

int64_t nanoUsdOf(double usd) { return std::llround(usd * 1e9); }

double usdOf(int64_t nanoUsd) { return double(nanoUsd) / 1e9; }

json::object toJson(const TokenUsage& u) {
  return json::object{{"inputTokens", u.inputTokens},
                      {"outputTokens", u.outputTokens},
                      {"cachedInputTokens", u.cachedInputTokens},
                      {"tokens", u.tokens()},
                      {"costUsd", usdOf(u.costNanoUsd)},
                      {"modelTurns", u.modelTurns}};
}

TokenUsage usageFromJson(const json::object& o) {
  auto count = [&](std::string_view key) {
    int64_t n = json::requireInt(o, key);
    if (n < 0) throw InvalidArgumentError("usage '" + std::string(key) + "' is negative");
    return n;
  };
  const auto& cost = json::require(o, "costUsd");
  if (!cost.is_number() || cost.to_number<double>() < 0) {
    throw InvalidArgumentError("usage 'costUsd' must be a number >= 0");
  }
  return TokenUsage{count("inputTokens"), count("outputTokens"), count("cachedInputTokens"),
                    nanoUsdOf(cost.to_number<double>()), count("modelTurns")};
}

}  // namespace loom::kernel
