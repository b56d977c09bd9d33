// The Python copies of agents' transcripts, kept between turns. The agent loop lends each
// model call the run's transcript (json::SharedArray, ADR 0007): the messages of turn k are
// those of turn k-1 plus what was appended, in storage that never moves. A Python model needs
// them as Python objects; converting the whole transcript on every turn is O(turns^2) (60 MB
// of JSON for a 200-turn agent with 3 kB tool results). So per execution the converted list
// is kept with the SharedArray it came from (which keeps that storage alive, so an address
// cannot be reused), and the next turn converts only the messages past the longest prefix
// whose values are the very same ones. The model gets a fresh list of fresh message dicts each
// turn (shallow copies: a value nested in a message is shared with later turns, so a model
// must not change one in place).
// At most kMaxRuns executions are kept (least recently used first out). GIL held throughout.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <string>

#include "loom/json/shared_array.h"
#include "py_callbacks.h"

namespace loom::python {

class TranscriptCache {
 public:
  static constexpr std::size_t kMaxRuns = 256;
  // `lent` as a Python list (see above).
  py::list messages(const std::string& executionId, const json::SharedArray& lent);

 private:
  struct Entry {
    json::SharedArray lent;
    SharedPy converted;  // the py::list of lent's messages
    uint64_t used = 0;
  };
  std::map<std::string, Entry> runs_;
  uint64_t clock_ = 0;
};

}  // namespace loom::python
