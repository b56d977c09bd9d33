#include "ended_result.h"

#include "replay_log.h"

namespace loom::workflow {

json::value cancelledError(const json::value& reason) {
  return json::object{{"code", "cancelled"}, {"message", reason}};
}

RunResult endedResult(const kernel::ExecutionInfo& info, const kernel::EventStore& store) {
  using kernel::EventType;
  RunResult r;
  r.id = info.id;
  r.status = info.status;
  store.scan(info.id, 1, [&](const kernel::Event& e) {
    refuseErased(info.id, e);
    if (e.type == EventType::kExecutionCompleted) r.output = e.data.at("output");
    if (e.type == EventType::kExecutionFailed) r.error = e.data.at("error");
    if (e.type == EventType::kExecutionCancelled) r.error = cancelledError(e.data.at("reason"));
  });
  return r;
}

}  // namespace loom::workflow
