#include "loom/effects/task.h"

#include "loom/util/error.h"

namespace loom::effects {

void TaskRegistry::add(TaskDefinition definition, TaskFn fn) {
  if (definition.id.empty()) throw InvalidArgumentError("a task needs a non-empty id");
  if (definition.kind.empty()) {
    throw InvalidArgumentError("task '" + definition.id + "' needs a kind (tool, llm, flow...)");
  }
  if (!fn) throw InvalidArgumentError("task '" + definition.id + "' has no function");
  auto id = definition.id;
  if (!tasks_.emplace(id, Task{std::move(definition), std::move(fn)}).second) {
    throw AlreadyExistsError("task '" + id + "' is registered twice");
  }
}

const Task* TaskRegistry::find(std::string_view effectId) const {
  auto it = tasks_.find(effectId);
  return it == tasks_.end() ? nullptr : &it->second;
}

std::vector<std::string> TaskRegistry::ids() const {
  std::vector<std::string> out;
  for (const auto& [id, task] : tasks_) out.push_back(id);
  return out;
}

}  // namespace loom::effects
