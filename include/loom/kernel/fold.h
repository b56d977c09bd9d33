// The kernel's fold: a log turned into the folded state of an execution, the value a resume
// reads. Its JSON text (docs/spec/events.md, "Folded state"):
//   {"workflow":W,"subject":S|null,"status":T,"input":I,
//    "steps":{"<stepId>":<output>,...},"signals":[{"name":N,"payload":P},...],"result":R|null}
// where R is the output of a completed execution or the error of a failed one.
// Workflows with a richer state (the agent loop) fold their own on top of this one.
#pragma once

#include <vector>

#include "loom/kernel/event.h"
#include "loom/kernel/execution_info.h"

namespace loom::kernel {

class Fold {
 public:
  void apply(const Event& event);
  const json::object& state() const { return state_; }

 private:
  json::object state_;
};

json::object foldEvents(const std::vector<Event>& events);

// The JSON text length of the folded state, from the sizes applyEvent keeps.
int64_t foldedStateBytes(const FoldSizes& sizes);

}  // namespace loom::kernel
