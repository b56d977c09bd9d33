// The rows of an agent app's [agent.budget] (docs/observability.md, "Budgets").
#include "agent_app/agent_app_option_rows.h"
#include "app/option_row_support.h"

namespace loom::agent_app {
namespace {

AgentBudgetSection& budget(Config& c) {
  AgentSection& a = c.agent ? *c.agent : c.agent.emplace();
  return a.budget ? *a.budget : a.budget.emplace();
}
bool hasBudget(const Config& c) { return c.agent && c.agent->budget; }
// The value validateConfig checks against the row's range (0, in range, when unset).
template <typename T, typename Get>
OptionValue valueOf(const Config& c, Get get) {
  if (!hasBudget(c)) return OptionValue(T{});
  auto v = get(*c.agent->budget);
  return OptionValue(v ? T(*v) : T{});
}
template <typename Get>
std::string shown(const Config& c, Get get) {
  if (!hasBudget(c)) return {};
  auto v = get(*c.agent->budget);
  return v ? optionValueText(OptionValue(*v)) : std::string("none");
}

}  // namespace

void addBudgetRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r = addAgentAppRow(
        rows, "agent.budget", OptionType::kTable,
        "Limits on what one run spends, counted from what its steps recorded (a replay "
        "neither counts a step twice nor forgets one) and checked at the start of each turn. "
        "Over a limit the run parks `budgetExceeded`, naming it, until `loom signal ID "
        "budget:<agent>#turn:<i>:model '{\"maxTokens\": N}'` raises it (or `loom cancel`). "
        "Unset: no limit.");
    r.set = [](Config& c, const OptionValue&) { budget(c); };
  }
  {
    OptionRow& r = addAgentAppRow(rows, "agent.budget.maxTokens", OptionType::kInteger,
                                  "Input plus output tokens of the run's model steps.");
    r.min = 0;
    r.max = 1e15;
    r.set = [](Config& c, const OptionValue& v) { budget(c).maxTokens = std::get<int64_t>(v); };
    r.show = [](const Config& c) { return shown(c, [](auto& b) { return b.maxTokens; }); };
    r.get = [](const Config& c) {
      return valueOf<int64_t>(c, [](auto& b) { return b.maxTokens; });
    };
  }
  {
    OptionRow& r = addAgentAppRow(rows, "agent.budget.maxCostUsd", OptionType::kNumber,
                                  "Their cost in USD at observability.prices.");
    r.min = 0;
    r.max = 1e9;
    r.set = [](Config& c, const OptionValue& v) { budget(c).maxCostUsd = numberOf(v); };
    r.show = [](const Config& c) { return shown(c, [](auto& b) { return b.maxCostUsd; }); };
    r.get = [](const Config& c) {
      return valueOf<double>(c, [](auto& b) { return b.maxCostUsd; });
    };
  }
  {
    OptionRow& r = addAgentAppRow(rows, "agent.budget.maxToolCalls", OptionType::kInteger,
                                  "Tool calls run.");
    r.min = 0;
    r.max = 1e12;
    r.set = [](Config& c, const OptionValue& v) {
      budget(c).maxToolCalls = std::get<int64_t>(v);
    };
    r.show = [](const Config& c) { return shown(c, [](auto& b) { return b.maxToolCalls; }); };
    r.get = [](const Config& c) {
      return valueOf<int64_t>(c, [](auto& b) { return b.maxToolCalls; });
    };
  }
  {
    OptionRow& r = addAgentAppRow(rows, "agent.budget.onExceeded", OptionType::kString,
                                  "`park`: the run parks `budgetExceeded` until a raise; "
                                  "`fail`: it fails, naming the limit.",
                                  "\"park\"");
    r.allowed = {"park", "fail"};
    r.set = [](Config& c, const OptionValue& v) {
      budget(c).onExceeded = std::get<std::string>(v);
    };
    r.show = [](const Config& c) {
      return hasBudget(c) ? optionValueText(OptionValue(c.agent->budget->onExceeded))
                          : std::string();
    };
    r.get = [](const Config& c) {
      return OptionValue(hasBudget(c) ? c.agent->budget->onExceeded : std::string("park"));
    };
  }
}

}  // namespace loom::agent_app
