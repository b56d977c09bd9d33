// The option rows of how runs are operated (docs/operations.md): execution.retry (durable
// retries of retryable effect failures, per effect id overrides) and execution.leaseTtlMs (how
// long a run's lease holds without a heartbeat), appended to the one option table (options.cc)
// in the execution group, and the checks only the app's tasks can tell.
#pragma once

#include <vector>

#include "app/options.h"
#include "loom/middleware/claim_check/claim_check_config.h"

namespace loom::app {

void addRunOwnershipRows(std::vector<OptionRow>& rows);

// Cross-field rules of execution.retry (maxIntervalMs >= initialIntervalMs, also after an
// override) and, with a registry, an override naming no effect of the app (a typo would
// change nothing).
void validateRunOwnership(const Config& config, const middleware::KnownTasks& tasks,
                          ConfigIssues& issues);

}  // namespace loom::app
