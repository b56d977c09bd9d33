// agent.budget (AgentBudget, agent_loop.h): its limits, read from JSON, and the check.
#include <cmath>
#include <cstdio>

#include "loom/agent/agent_loop.h"
#include "loom/util/error.h"

namespace loom::agent {
namespace {

std::string usd(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "$%.4f", value);
  return text;
}

}  // namespace

std::string AgentBudget::exceededBy(const kernel::TokenUsage& spent, int64_t toolCalls) const {
  if (maxTokens && spent.tokens() >= *maxTokens) {
    return "maxTokens " + std::to_string(*maxTokens) + ": " + std::to_string(spent.tokens()) +
           " tokens spent";
  }
  if (maxCostUsd && kernel::usdOf(spent.costNanoUsd) >= *maxCostUsd) {
    return "maxCostUsd " + usd(*maxCostUsd) + ": " + usd(kernel::usdOf(spent.costNanoUsd)) +
           " spent";
  }
  if (maxToolCalls && toolCalls >= *maxToolCalls) {
    return "maxToolCalls " + std::to_string(*maxToolCalls) + ": " + std::to_string(toolCalls) +
           " tool calls run";
  }
  return {};
}

json::object AgentBudget::toJson() const {
  json::object o{{"onExceeded", onExceeded}};
  if (maxTokens) o["maxTokens"] = *maxTokens;
  if (maxCostUsd) o["maxCostUsd"] = *maxCostUsd;
  if (maxToolCalls) o["maxToolCalls"] = *maxToolCalls;
  return o;
}

AgentBudget budgetFromJson(const json::value& v, std::string_view where, AgentBudget base) {
  const std::string at(where);
  if (!v.is_object()) throw InvalidArgumentError(at + " must be an object of budget limits");
  for (const auto& kv : v.get_object()) {
    const std::string_view key = kv.key();
    const json::value& value = kv.value();
    auto count = [&] {
      if (!value.is_int64() || value.get_int64() < 0) {
        throw InvalidArgumentError(at + "." + std::string(key) + " must be a whole number >= 0");
      }
      return value.get_int64();
    };
    if (key == "maxTokens") {
      base.maxTokens = count();
    } else if (key == "maxToolCalls") {
      base.maxToolCalls = count();
    } else if (key == "maxCostUsd") {
      if (!value.is_number() || !(value.to_number<double>() >= 0)) {
        throw InvalidArgumentError(at + ".maxCostUsd must be a number >= 0");
      }
      base.maxCostUsd = value.to_number<double>();
    } else if (key == "onExceeded") {
      if (!value.is_string() || (value.get_string() != "park" && value.get_string() != "fail")) {
        throw InvalidArgumentError(at + ".onExceeded must be \"park\" or \"fail\"");
      }
      base.onExceeded = std::string(value.get_string());
    } else {
      throw InvalidArgumentError(at + " has the unknown key '" + std::string(key) +
                                 "'; expected maxTokens, maxCostUsd, maxToolCalls or onExceeded");
    }
  }
  return base;
}

}  // namespace loom::agent
