// Model-input journaling (execution.journal.modelInput). Every model step journals the input it
// was called with, in one of two forms:
//   full:  {"messages": [...the whole transcript...]}   (the log grows with turns squared)
//   delta: {"since": "<previous model step id>" | null,
//           "appended": [message | {"fromStep": S} | {"role":"tool","toolCallId":C,"fromStep":S}],
//           "compaction"?: {"step": "<compact step id>", "keepHead": h, "keepTail": t}}
// A {"fromStep": S} entry stands for the assistant message recorded as model step S's output;
// a tool entry with "fromStep" stands for writeBack(C, output of tool step S). Rebuilding
// applies the appended entries to the input of `since`, then the compaction (keep the first h
// and last t messages around the summary message). Both forms rebuild the same inputs
// (tested); audit and export always read the rebuilt, full input.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/json/json.h"
#include "loom/kernel/event.h"

namespace loom::agent {

enum class ModelInputMode { kFull, kDelta };

// Parses "full" / "delta"; throws InvalidArgumentError naming the accepted values.
ModelInputMode modelInputModeFromName(std::string_view name);

// Tracks, during a run, what the next model step must journal.
class ModelInputJournal {
 public:
  explicit ModelInputJournal(ModelInputMode mode) : mode_(mode) {}

  // A message was appended to the transcript; `entry` is how delta journals it (a reference
  // or the message itself).
  void noteAppended(json::value entry);
  // The transcript was compacted by step `compactStep`, keeping `keepHead` + `keepTail`.
  void noteCompaction(std::string_view compactStep, int64_t keepHead, int64_t keepTail);

  // The journal form of the input of model step `stepId` called with `messages`; afterwards
  // deltas are taken from this step.
  json::value take(std::string_view stepId, const json::array& messages);
  // The journal form of a compaction step's input (messages h..n-t of the transcript).
  json::value compactionInput(const json::array& messages, int64_t keepHead,
                              int64_t keepTail) const;

 private:
  ModelInputMode mode_;
  std::optional<std::string> since_;
  json::array appended_;
  json::value compaction_;
};

// The full input messages of every model step of agent loop `loop`, rebuilt from its
// execution's events, by step id. Throws DataLossError naming the step when a reference
// cannot be resolved.
std::map<std::string, json::array> rebuildModelInputs(const std::vector<kernel::Event>& events,
                                                      std::string_view loop);

}  // namespace loom::agent
