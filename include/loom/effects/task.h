// Tasks: the effects a workflow may call, registered once at boot under their effect id.
// A TaskDefinition says what the task is (its kind drives the middleware's scope rules, e.g.
// claim-check touches only kind "tool"); the TaskFn is what runs. The registry refuses a
// second registration of the same id. Thread-safety: fill it before boot, then read-only.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/effects/effect_context.h"
#include "loom/json/json.h"

namespace loom::effects {

// The kinds the runtime itself uses; any other non-empty string is allowed too.
inline constexpr std::string_view kKindTool = "tool";
inline constexpr std::string_view kKindLlm = "llm";
inline constexpr std::string_view kKindFlow = "flow";

struct TaskDefinition {
  std::string id;    // the effect id
  std::string kind;  // "tool", "llm", "flow" or another non-empty string
  bool returnsMedia = false;  // results are media parts (claim-check passes them through)
  std::string description;
  json::value inputSchema;    // JSON Schema of the input, null when unspecified
};

using TaskFn = std::function<json::value(const EffectContext&, json::value input)>;

struct Task {
  TaskDefinition definition;
  TaskFn fn;
};

class TaskRegistry {
 public:
  // Registers a task. Throws AlreadyExistsError when the id is taken and InvalidArgumentError
  // when id or kind is empty.
  void add(TaskDefinition definition, TaskFn fn);
  // The task registered under `effectId`, nullptr when none is.
  const Task* find(std::string_view effectId) const;
  std::vector<std::string> ids() const;

 private:
  std::map<std::string, Task, std::less<>> tasks_;
};

}  // namespace loom::effects
