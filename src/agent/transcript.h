// The agent's transcript: the messages a model is called with, and writeBack, which turns a
// tool's recorded result into the tool message the model reads. writeBack is a pure function
// of (tool call id, result): the delta journal stores a reference to the tool step instead of
// the message, and rebuilding applies writeBack to the recorded output again.
// Tainted content (effects/taint.h) is fenced: wrapped in a delimiter naming its origin and
// telling the model it is data, not instructions; the message keeps "taint": [origins].
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/json/json.h"
#include "loom/json/shared_array.h"

namespace loom::agent {

// {"role":"tool","toolCallId":id,"content":<result, rendered>} (+ "taint" when fenced).
// Takes `result` by value: a caller done with it moves it in (no copy of a large result).
json::object writeBack(std::string_view toolCallId, json::value result);

// The tool message for a call that produced no result (failed, denied, unknown tool).
json::object toolErrorMessage(std::string_view toolCallId, json::value error);

// The fenced text of an untrusted value.
std::string fence(const json::value& value, const std::vector<std::string>& origins);

// The message that replaces compacted history: the summary text (from the compaction step's
// assistant message), fenced and marked tainted when any summarized message was tainted.
json::object summaryMessage(const json::value& compactOutput, const json::SharedArray& summarized);
// The same from the union of the summarized messages' taint origins.
json::object summaryMessage(const json::value& compactOutput,
                            const std::vector<std::string>& origins);
// Adds to `origins` those of `more` it does not hold yet (first-seen order).
void addTaintOrigins(std::vector<std::string>& origins, const std::vector<std::string>& more);

// The taint origins a message carries ("taint" member), empty when none.
std::vector<std::string> messageTaint(const json::value& message);

// UTF-8 bytes of the messages' JSON text (what warnTranscriptBytes and triggerBytes count).
int64_t transcriptBytes(const json::SharedArray& messages);
int64_t transcriptBytes(const json::array& messages);

// The messages of a run with their byte count kept up to date (no re-serialization per turn).
// messages() is lent to each model call: copying it is O(1) (json/shared_array.h).
// A transcript resumed from a checkpoint is deferred: it knows its size and bytes, and reads
// its messages (through `load`) only when they are first read, so a resume that replays a
// few recorded turns and parks again never rebuilds a long transcript.
class Transcript {
 public:
  Transcript() = default;
  // A deferred transcript of `size` messages and `bytes` bytes. `load` returns them; a result
  // of another size or byte count throws workflow::UnusableCheckpoint (the log and the
  // checkpoint disagree: the runtime replays the whole log instead).
  Transcript(int64_t size, int64_t bytes, std::function<json::SharedArray()> load);

  void append(json::value message);
  void replace(json::SharedArray messages);
  // Loads a deferred transcript first (its errors propagate).
  const json::SharedArray& messages() const;
  int64_t bytes() const { return bytes_; }
  std::size_t size() const { return size_; }

 private:
  void load() const;

  mutable json::SharedArray messages_;
  mutable std::function<json::SharedArray()> load_;  // set while deferred
  mutable json::array pending_;                       // appended while deferred
  int64_t deferredSize_ = 0, deferredBytes_ = 0;      // what load_ must return
  std::size_t size_ = 0;
  int64_t bytes_ = 2;  // "[]"
};

}  // namespace loom::agent
