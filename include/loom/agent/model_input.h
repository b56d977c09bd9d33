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
#include <unordered_map>
#include <vector>

#include "loom/json/json.h"
#include "loom/json/shared_array.h"
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
  // Delta mode reads only what was appended since the last take, never `messages`.
  json::value take(std::string_view stepId, const json::SharedArray& messages);
  // The journal form of a compaction step's input (messages h..n-t of the transcript).
  json::value compactionInput(const json::SharedArray& messages, int64_t keepHead,
                              int64_t keepTail) const;

 private:
  ModelInputMode mode_;
  std::optional<std::string> since_;
  json::array appended_;
  json::value compaction_;
};

// Rebuilds the full input messages of each model step of agent loop `loop` from its
// execution's events, fed in log order, turn by turn. It holds one transcript and the outputs
// recorded since the last model step, never every turn's input: memory is linear in the
// transcript and time linear in the log, whatever the number of turns.
class ModelInputRebuilder {
 public:
  explicit ModelInputRebuilder(std::string_view loop) : loop_(loop) {}

  // Feeds the next event. Returns the rebuilt input when `e` is a model step of the loop
  // (valid until the next call), nullptr otherwise. Throws DataLossError naming the step when
  // a reference cannot be resolved (a step not recorded, sealed or erased before it).
  const json::array* apply(const kernel::Event& e);
  // The model step whose input apply() last returned, and that input; empty before the first.
  const std::string& lastModelStep() const { return currentStep_; }
  const json::array& lastInput() const { return current_; }

 private:
  json::array rebuild(const std::string& stepId, const json::object& input);
  json::value resolve(const std::string& stepId, const json::value& entry) const;
  json::array compact(const std::string& stepId, json::array base, const json::object& c) const;
  const json::value& recorded(const std::string& stepId, const std::string& from) const;

  std::string loop_;
  std::string currentStep_;
  json::array current_;
  // The outputs a delta may refer to: the last model step's and those recorded after it.
  std::unordered_map<std::string, json::value> outputs_;
};

// The full input messages of every model step of agent loop `loop`, by step id. Keeps every
// input, so memory grows with turns squared: for tests and audits of short runs; stream with
// ModelInputRebuilder otherwise. Throws DataLossError as ModelInputRebuilder::apply does.
std::map<std::string, json::array> rebuildModelInputs(const std::vector<kernel::Event>& events,
                                                      std::string_view loop);

}  // namespace loom::agent
