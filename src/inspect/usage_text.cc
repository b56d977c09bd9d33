#include "inspect/usage_text.h"

#include <cstdio>

namespace loom::inspect {
std::string shortNumber(int64_t n) {
  if (n < 1000) return std::to_string(n);
  const char* units = "kMGT";
  double value = static_cast<double>(n);
  int unit = -1;
  while (value >= 1000 && unit < 3) {
    value /= 1000;
    ++unit;
  }
  char text[16];
  std::snprintf(text, sizeof text, value < 10 ? "%.1f%c" : "%.0f%c", value, units[unit]);
  return text;
}

std::string dollars(int64_t nanoUsd) {
  char text[32];
  double usd = kernel::usdOf(nanoUsd);
  std::snprintf(text, sizeof text, usd < 1 ? "$%.4f" : "$%.2f", usd);
  return text;
}

std::string usageText(const kernel::TokenUsage& u) {
  std::string text = std::to_string(u.tokens()) + " tokens (" + std::to_string(u.inputTokens) +
                     " in, " + std::to_string(u.outputTokens) + " out";
  if (u.cachedInputTokens > 0) text += ", " + std::to_string(u.cachedInputTokens) + " cached";
  text += ") in " + std::to_string(u.modelTurns) + " model turn" + (u.modelTurns == 1 ? "" : "s");
  text += u.costNanoUsd > 0 ? ", " + dollars(u.costNanoUsd)
                            : std::string(", no price (observability.prices)");
  return text;
}

std::string shortUsage(const kernel::TokenUsage& u) {
  if (u.modelTurns == 0) return "-";
  std::string text = shortNumber(u.tokens());
  if (u.costNanoUsd > 0) {
    char cost[32];
    double usd = kernel::usdOf(u.costNanoUsd);
    std::snprintf(cost, sizeof cost, usd < 1 ? " $%.3f" : usd < 1000 ? " $%.2f" : " $%.0f", usd);
    text += cost;
  }
  return text;
}

}  // namespace loom::inspect
