#include "py_transcript.h"

#include <algorithm>

#include "py_json.h"

namespace loom::python {

py::list TranscriptCache::messages(const std::string& executionId,
                                   const json::SharedArray& lent) {
  Entry& entry = runs_[executionId];
  entry.used = ++clock_;
  std::size_t reuse = 0;
  py::list old;
  if (entry.converted) {
    old = py::reinterpret_borrow<py::list>(entry.converted->get());
    std::size_t have = std::min({entry.lent.size(), lent.size(), old.size()});
    while (reuse < have && &entry.lent[reuse] == &lent[reuse]) ++reuse;
  }
  py::list out(lent.size());
  for (std::size_t i = 0; i < reuse; ++i) out[i] = old[i];
  for (std::size_t i = reuse; i < lent.size(); ++i) out[i] = toPython(lent[i]);
  entry.lent = lent;
  entry.converted = keep(out);
  if (runs_.size() > kMaxRuns) {
    auto oldest = std::min_element(runs_.begin(), runs_.end(), [](const auto& a, const auto& b) {
      return a.second.used < b.second.used;
    });
    runs_.erase(oldest);
  }
  py::list mine(lent.size());  // a list of its own, of dicts of its own (nested values shared)
  for (std::size_t i = 0; i < lent.size(); ++i) {
    py::handle m = out[i];
    mine[i] = PyDict_Check(m.ptr()) ? py::object(py::reinterpret_borrow<py::dict>(m).attr("copy")())
                                    : py::reinterpret_borrow<py::object>(m);
  }
  return mine;
}

}  // namespace loom::python
