// execution.effectMiddleware in loom.toml: builds the ready-made middleware an entry's
// `kind` names (retry, timeout) from its checked options, and renders the list for
// describeConfig. Internal to loom_app.
#pragma once

#include <string>

#include "app/options.h"

namespace loom::app {

// Builds the middleware of one [[execution.effectMiddleware]] entry whose keys and value
// types were checked against the table, appending it to c.execution.effectMiddleware, or
// adds to `issues` what the table cannot check (maxDelayMs below initialDelayMs).
void addEffectMiddlewareEntry(Config& c, const OptionEntry& entry, const std::string& entryPath,
                              ConfigIssues& issues);

// "[retry(attempts = 3, ...), timeout(ms = 30000), myMiddleware]".
std::string showEffectMiddleware(const Config& c);

}  // namespace loom::app
