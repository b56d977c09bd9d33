// What a model step records of its usage (docs/spec/events.md, STEP_COMPLETED "usage"): the
// tokens its response reports ({"usage": {"inputTokens", "outputTokens",
// "cachedInputTokens"?}}, the shape every Loom model returns) and their cost at the app's
// price for that model. A response without usage, or with usage that is not whole numbers in
// range (a server's own data), records none: the step is journaled as it is.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "loom/json/json.h"
#include "loom/kernel/usage.h"

namespace loom::workflow {

std::optional<json::object> recordedUsage(std::string_view modelId, const json::value& output,
                                          const std::map<std::string, kernel::ModelPrice>& prices);

}  // namespace loom::workflow
