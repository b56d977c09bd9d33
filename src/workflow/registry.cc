#include "loom/util/error.h"
#include "loom/workflow/workflow.h"

namespace loom::workflow {

void WorkflowRegistry::add(std::string name, std::string description, WorkflowFn fn) {
  if (name.empty()) throw InvalidArgumentError("a workflow needs a non-empty name");
  auto key = name;
  if (!workflows_.emplace(key, Workflow{std::move(name), std::move(description), std::move(fn)})
           .second) {
    throw AlreadyExistsError("workflow '" + key + "' is registered twice");
  }
}

const Workflow* WorkflowRegistry::find(std::string_view name) const {
  auto it = workflows_.find(name);
  return it == workflows_.end() ? nullptr : &it->second;
}

std::vector<const Workflow*> WorkflowRegistry::all() const {
  std::vector<const Workflow*> out;
  for (const auto& [name, wf] : workflows_) out.push_back(&wf);
  return out;
}

}  // namespace loom::workflow
