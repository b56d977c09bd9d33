// The code a recorded run is checked against or moved to (`loom replay-check`,
// `loom upgrade`): this program's workflows, or, for an agent app's run, its app file as it
// is now, booted once per file.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "command.h"

namespace loom::cli {

class CodeAtHand {
 public:
  explicit CodeAtHand(HomeSession& session) : session_(session) {}

  // The session whose registries (and runtime) hold run `info`'s workflow; nullptr when its
  // workflow is not registered here and its input names no agent app. Throws what booting the
  // app file throws.
  HomeSession* sessionFor(const kernel::ExecutionInfo& info);

 private:
  struct BootedApp {
    std::unique_ptr<workflow::WorkflowRegistry> workflows =
        std::make_unique<workflow::WorkflowRegistry>();
    std::unique_ptr<effects::TaskRegistry> tasks = std::make_unique<effects::TaskRegistry>();
    std::unique_ptr<HomeSession> session;
  };

  HomeSession& session_;
  std::map<std::string, BootedApp> apps_;  // by app file
};

}  // namespace loom::cli
