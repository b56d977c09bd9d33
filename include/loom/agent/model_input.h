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
#include <memory>
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

  // What was appended since the last model step, in the delta form (both modes keep it):
  // {"since": step | null, "appended": [...]}. Between turns (no compaction pending) this
  // with the log rebuilds the transcript (ModelInputRebuilder::inputAfter); the agent loop's
  // checkpoint keeps it. restore() takes it back; InvalidArgumentError when malformed.
  json::value pending() const;
  void restore(const json::value& pending);

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
  explicit ModelInputRebuilder(std::string_view loop);
  ~ModelInputRebuilder();
  ModelInputRebuilder(ModelInputRebuilder&&) noexcept;
  ModelInputRebuilder& operator=(ModelInputRebuilder&&) noexcept;

  // Feeds the next event. Returns the rebuilt input when `e` is a model step of the loop
  // (valid until the next call), nullptr otherwise. Throws DataLossError naming the step when
  // a reference cannot be resolved (a step not recorded, sealed or erased before it).
  const json::array* apply(const kernel::Event& e);
  // The model step whose input apply() last returned, and that input; empty before the first.
  const std::string& lastModelStep() const;
  const json::array& lastInput() const;
  // The messages a delta input `pending` (ModelInputJournal::pending) stands for, over the
  // events fed so far: what the next model step's input would be. Ends the rebuilder (its
  // last input is moved out). Throws DataLossError as apply does.
  json::array inputAfter(const json::value& pending) &&;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The byte size of each model step's input (what foldAgentState reports as transcriptBytes),
// rebuilt by the same rules as ModelInputRebuilder but keeping only each message's size and
// taint origins, never the messages: a 10,000-turn state fold does not hold a second copy of
// every tool result. Throws DataLossError as ModelInputRebuilder does.
class TranscriptSizer {
 public:
  explicit TranscriptSizer(std::string_view loop);
  ~TranscriptSizer();
  TranscriptSizer(TranscriptSizer&&) noexcept;
  TranscriptSizer& operator=(TranscriptSizer&&) noexcept;

  // Feeds the next event; true when it was a model step of the loop.
  bool apply(const kernel::Event& e);
  // UTF-8 bytes of the JSON text of the last model step's input; 0 before the first.
  int64_t bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The full input messages of every model step of agent loop `loop`, by step id. Keeps every
// input, so memory grows with turns squared: for tests and audits of short runs; stream with
// ModelInputRebuilder otherwise. Throws DataLossError as ModelInputRebuilder::apply does.
std::map<std::string, json::array> rebuildModelInputs(const std::vector<kernel::Event>& events,
                                                      std::string_view loop);

}  // namespace loom::agent
