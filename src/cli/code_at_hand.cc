#include "code_at_hand.h"

namespace loom::cli {

HomeSession* CodeAtHand::sessionFor(const kernel::ExecutionInfo& info) {
  if (session_.workflows().find(info.workflow) != nullptr) return &session_;
  json::object started = startedDataOf(session_.store(false), info.id);
  const auto* input = started.if_contains("input");
  auto file = agent_app::agentAppFileOf(input != nullptr ? *input : json::value());
  if (!file) return nullptr;
  auto& app = apps_[file->string()];
  if (!app.session) {
    auto session = session_.sibling(app.workflows.get(), app.tasks.get());
    session->loadWhatExecutionRan(info.id);
    app.session = std::move(session);
  }
  return app.session.get();
}

}  // namespace loom::cli
