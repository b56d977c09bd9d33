#include "inspect/run_state.h"

#include <algorithm>

#include "loom/agent/agent_state.h"
#include "loom/kernel/fold.h"

namespace loom::inspect {

namespace {

// Folds events in seq order, one at a time.
class RunFolder {
 public:
  explicit RunFolder(bool kernelOnly) : kernelOnly_(kernelOnly) {}

  void apply(const kernel::Event& e) {
    if (e.type == kernel::EventType::kExecutionStarted ||
        e.type == kernel::EventType::kCodeUpgraded) {  // the version it goes on on now
      if (const auto* v = e.data.if_contains("codeVersion"); v && v->is_string()) {
        codeVersion_ = std::string(v->get_string());
      }
    }
    if (e.type == kernel::EventType::kStepCompleted) {
      if (auto u = kernel::stepUsage(e.data)) usage_.add(*u);
    }
    if (kernelOnly_) return fold_->apply(e);
    if (auto loop = agent::agentLoopOf(e)) {
      auto known = [&](const auto& l) { return l.first == *loop; };
      if (std::find_if(loops_.begin(), loops_.end(), known) == loops_.end()) {
        loops_.emplace_back(*loop, agent::AgentStateFolder(*loop));
      }
      fold_.reset();
    }
    if (fold_) fold_->apply(e);
    for (auto& [name, folder] : loops_) folder.apply(e);
  }

  FoldedRun finish() {
    FoldedRun run;
    run.codeVersion = codeVersion_;
    run.usage = usage_;
    if (fold_) {
      run.kernelState = fold_->state();
      return run;
    }
    for (auto& [loop, folder] : loops_) run.loops.emplace_back(loop, json::value(folder.take()));
    return run;
  }

 private:
  bool kernelOnly_;
  std::optional<std::string> codeVersion_;
  kernel::TokenUsage usage_;
  std::optional<kernel::Fold> fold_{std::in_place};
  std::vector<std::pair<std::string, agent::AgentStateFolder>> loops_;
};

}  // namespace

FoldedRun foldRun(const kernel::EventStore& store, const std::string& id, bool kernelOnly) {
  RunFolder folder(kernelOnly);
  store.scan(id, 1, [&](const kernel::Event& e) { folder.apply(e); });
  return folder.finish();
}

FoldedRun foldRun(const std::vector<kernel::Event>& events, bool kernelOnly) {
  RunFolder folder(kernelOnly);
  for (const auto& e : events) folder.apply(e);
  return folder.finish();
}

json::value toJson(FoldedRun&& run, const std::string& id) {
  if (run.kernelState) {
    if (run.codeVersion && run.kernelState->is_object()) {
      run.kernelState->as_object()["codeVersion"] = *run.codeVersion;
    }
    if (run.usage.modelTurns > 0 && run.kernelState->is_object()) {
      run.kernelState->as_object()["usage"] = kernel::toJson(run.usage);
    }
    return std::move(*run.kernelState);
  }
  // Built by moves (a json::object passed as a json::value, or put in an initializer list,
  // can be copied: a second copy of every tool result).
  json::value doc = json::object{};
  doc.as_object()["id"] = id;
  if (run.codeVersion) doc.as_object()["codeVersion"] = *run.codeVersion;
  if (run.usage.modelTurns > 0) doc.as_object()["usage"] = kernel::toJson(run.usage);
  json::array& folded = doc.as_object()["loops"].emplace_array();
  for (auto& [loop, state] : run.loops) {
    json::object& entry = folded.emplace_back(json::object{}).as_object();
    entry["loop"] = loop;
    entry["stateBytes"] = static_cast<int64_t>(json::textBytes(state));
    entry["state"] = std::move(state);
  }
  return doc;
}

}  // namespace loom::inspect
