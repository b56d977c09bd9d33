#include "observability_option_rows.h"

#include <cstdio>

#include "option_row_support.h"

namespace loom::app {
namespace {

void addPrice(Config& c, const OptionEntry& entry, const std::string&, ConfigIssues&) {
  std::string model;
  kernel::ModelPrice price;
  for (const auto& [key, value] : entry) {
    if (key == "name") model = std::get<std::string>(value);
    if (key == "input") price.input = numberOf(value);
    if (key == "output") price.output = numberOf(value);
    if (key == "cachedInput") price.cachedInput = numberOf(value);
  }
  c.observability.prices[model] = price;
}

std::string showPrices(const Config& c) {
  std::string out = "{";
  for (const auto& [model, p] : c.observability.prices) {
    out += (out.size() > 1 ? ", " : "") + optionValueText(OptionValue(model)) +
           " = {input = " + optionValueText(OptionValue(p.input)) +
           ", output = " + optionValueText(OptionValue(p.output)) +
           (p.cachedInput ? ", cachedInput = " + optionValueText(OptionValue(*p.cachedInput))
                          : std::string()) +
           "}";
  }
  return out + "}";
}

}  // namespace

void addObservabilityRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r = addOptionRow(
        rows, "observability.prices", OptionType::kTableMap,
        "What models cost, in USD per million tokens, by model id (the model's effect id: "
        "`\"openai:gpt-4o\"`, `\"scripted\"`): `prices.\"openai:gpt-4o\" = { input = 2.5, "
        "output = 10, cachedInput = 1.25 }`. A model step that reports usage records its cost "
        "at its model's price when it runs (STEP_COMPLETED `usage.costUsd`), so a later change "
        "of price does not change what a run spent; a model with no price records tokens only "
        "(docs/observability.md).",
        "{}");
    r.addEntry = addPrice;
    r.show = showPrices;
  }
  const char* kFields[][2] = {
      {"input", "USD per million input tokens (those read from the server's cache excepted)."},
      {"output", "USD per million output tokens."},
      {"cachedInput",
       "USD per million input tokens the server read from its cache; unset: the input price."}};
  for (const auto& [key, description] : kFields) {
    OptionRow& r = addOptionRow(rows, std::string("observability.prices[].") + key,
                                OptionType::kNumber, description);
    r.min = 0;
    r.max = 1e6;
    r.required = std::string_view(key) != "cachedInput";
  }
}

}  // namespace loom::app
