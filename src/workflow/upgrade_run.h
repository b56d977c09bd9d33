// The body of WorkflowRuntime::upgrade (loom/workflow/upgrade.h), run under the lease the
// runtime took for it.
#pragma once

#include <string>

#include "loom/kernel/event_store.h"
#include "loom/workflow/runtime.h"

namespace loom::workflow {

UpgradeResult upgradeLeased(kernel::EventStore& store, const WorkflowRegistry& workflows,
                            const effects::TaskRegistry& tasks, const RuntimeOptions& options,
                            const kernel::Lease& lease, const std::string& executionId);

}  // namespace loom::workflow
