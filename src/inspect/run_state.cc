#include "inspect/run_state.h"

#include <algorithm>

#include "loom/agent/agent_state.h"
#include "loom/kernel/fold.h"

namespace loom::inspect {

FoldedRun foldRun(const kernel::EventStore& store, const std::string& id, bool kernelOnly) {
  std::optional<kernel::Fold> fold(std::in_place);
  std::vector<std::pair<std::string, agent::AgentStateFolder>> loops;
  store.scan(id, 1, [&](const kernel::Event& e) {
    if (kernelOnly) return fold->apply(e);
    if (auto loop = agent::agentLoopOf(e)) {
      auto known = [&](const auto& l) { return l.first == *loop; };
      if (std::find_if(loops.begin(), loops.end(), known) == loops.end()) {
        loops.emplace_back(*loop, agent::AgentStateFolder(*loop));
      }
      fold.reset();
    }
    if (fold) fold->apply(e);
    for (auto& [name, folder] : loops) folder.apply(e);
  });
  FoldedRun run;
  if (fold) {
    run.kernelState = fold->state();
    return run;
  }
  for (auto& [loop, folder] : loops) run.loops.emplace_back(loop, json::value(folder.take()));
  return run;
}

json::value toJson(FoldedRun&& run, const std::string& id) {
  if (run.kernelState) return std::move(*run.kernelState);
  // Built by moves (a json::object passed as a json::value, or put in an initializer list,
  // can be copied: a second copy of every tool result).
  json::value doc = json::object{};
  doc.as_object()["id"] = id;
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
