// The folded state of an agent loop: what a resume reads, and what the record's table
// measures as "State" (docs/spec/agent-state.md):
//   {"loop": name,
//    "frames": [{"stepId","tool","turn","output","meta":{"durationMs","attempt","outputBytes"}}],
//    "turnOutputs": [<assistant message of each turn>],
//    "_decisions": [{"turn", "decision": "callTools"|"answer"|"compact", "why"}],
//    "transcriptBytes": <bytes of the transcript after the last recorded step>,
//    "sawTaintFrom": [<origins of tainted results the loop wrote back>]}
// Folded from an execution's events alone. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/agent/model_input.h"
#include "loom/json/json.h"
#include "loom/kernel/event.h"

namespace loom::agent {

json::object foldAgentState(const std::vector<kernel::Event>& events, std::string_view loop);

// foldAgentState event by event (for a caller that streams the log with EventStore::scan):
// holds the state being folded and one size per transcript message, never the log.
class AgentStateFolder {
 public:
  explicit AgentStateFolder(std::string_view loop);
  void apply(const kernel::Event& e);
  // The folded state; the folder is empty afterwards.
  json::object take();

 private:
  std::string loop_;
  TranscriptSizer sizer_;
  json::array frames_, turnOutputs_, decisions_, sawTaintFrom_;
};

// The agent loop whose step `e` records, when it is a readable agent step.
std::optional<std::string> agentLoopOf(const kernel::Event& e);

// The loop names that appear in an execution's step ids, in order of first appearance.
std::vector<std::string> agentLoopsOf(const std::vector<kernel::Event>& events);

}  // namespace loom::agent
