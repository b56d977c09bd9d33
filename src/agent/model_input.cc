#include "loom/agent/model_input.h"

#include <unordered_map>

#include "agent/transcript.h"
#include "effects/step_ids.h"
#include "loom/util/error.h"

namespace loom::agent {

ModelInputMode modelInputModeFromName(std::string_view name) {
  if (name == "full") return ModelInputMode::kFull;
  if (name == "delta") return ModelInputMode::kDelta;
  throw InvalidArgumentError("execution.journal.modelInput must be \"full\" or \"delta\", not \"" +
                             std::string(name) + "\"");
}

void ModelInputJournal::noteAppended(json::value entry) {
  if (mode_ == ModelInputMode::kDelta) appended_.push_back(std::move(entry));
}

void ModelInputJournal::noteCompaction(std::string_view compactStep, int64_t keepHead,
                                       int64_t keepTail) {
  compaction_ = json::object{{"step", compactStep}, {"keepHead", keepHead}, {"keepTail", keepTail}};
}

json::value ModelInputJournal::take(std::string_view stepId, const json::array& messages) {
  if (mode_ == ModelInputMode::kFull) return json::object{{"messages", messages}};
  json::object d{{"since", since_ ? json::value(*since_) : json::value()},
                 {"appended", std::move(appended_)}};
  if (!compaction_.is_null()) d["compaction"] = std::move(compaction_);
  appended_ = {};
  compaction_ = nullptr;
  since_ = std::string(stepId);
  return d;
}

json::value ModelInputJournal::compactionInput(const json::array& messages, int64_t keepHead,
                                               int64_t keepTail) const {
  if (mode_ == ModelInputMode::kFull) {
    json::array middle(messages.begin() + keepHead,
                       messages.end() - static_cast<std::ptrdiff_t>(keepTail));
    return json::object{{"messages", std::move(middle)}};
  }
  int64_t n = static_cast<int64_t>(messages.size());
  return json::object{{"since", since_ ? json::value(*since_) : json::value()},
                      {"appended", appended_},
                      {"range", json::array{keepHead, n - keepTail}}};
}

namespace {

class Rebuilder {
 public:
  explicit Rebuilder(std::string_view loop) : loop_(loop) {}

  void apply(const kernel::Event& e) {
    if (e.type != kernel::EventType::kStepCompleted) return;
    const auto* step = e.data.if_contains("stepId");
    if (step == nullptr || !step->is_string()) return;  // sealed or erased: nothing to rebuild
    std::string stepId(step->get_string());
    auto id = effects::parseAgentStepId(stepId);
    if (!id || id->loop != loop_) return;
    outputs_[stepId] = e.data.at("output");
    if (id->kind != effects::AgentStepKind::kModel) return;
    const auto* input = e.data.if_contains("input");
    if (input == nullptr || !input->is_object()) {
      throw DataLossError("model step '" + stepId + "' has no journaled input to rebuild");
    }
    inputs_[stepId] = rebuild(stepId, input->get_object());
  }

  std::map<std::string, json::array> take() { return std::move(inputs_); }

 private:
  json::array rebuild(const std::string& stepId, const json::object& input) {
    if (const auto* full = input.if_contains("messages")) return full->as_array();
    json::array base;
    const auto& since = input.at("since");
    if (since.is_string()) {
      auto it = inputs_.find(std::string(since.get_string()));
      if (it == inputs_.end()) missing(stepId, std::string(since.get_string()));
      base = it->second;
    }
    for (const auto& entry : input.at("appended").as_array()) {
      base.push_back(resolve(stepId, entry));
    }
    if (const auto* c = input.if_contains("compaction"))
      base = compact(stepId, base, c->as_object());
    return base;
  }

  json::value resolve(const std::string& stepId, const json::value& entry) {
    const auto& o = entry.as_object();
    const auto* from = o.if_contains("fromStep");
    if (from == nullptr) return entry;
    const json::value& output = recorded(stepId, std::string(from->as_string()));
    if (o.contains("toolCallId")) return writeBack(o.at("toolCallId").as_string(), output);
    return output;
  }

  json::array compact(const std::string& stepId, const json::array& base, const json::object& c) {
    int64_t head = c.at("keepHead").as_int64(), tail = c.at("keepTail").as_int64();
    int64_t n = static_cast<int64_t>(base.size());
    if (head < 0 || tail < 0 || head + tail > n) {
      throw DataLossError("model step '" + stepId + "' journals a compaction outside its input");
    }
    json::array middle(base.begin() + head, base.end() - tail);
    json::array out(base.begin(), base.begin() + head);
    out.push_back(summaryMessage(recorded(stepId, std::string(c.at("step").as_string())), middle));
    out.insert(out.end(), base.end() - tail, base.end());
    return out;
  }

  const json::value& recorded(const std::string& stepId, const std::string& from) {
    auto it = outputs_.find(from);
    if (it == outputs_.end()) missing(stepId, from);
    return it->second;
  }

  [[noreturn]] static void missing(const std::string& stepId, const std::string& from) {
    throw DataLossError("model step '" + stepId + "' refers to step '" + from +
                        "', which is not recorded before it");
  }

  std::string loop_;
  std::unordered_map<std::string, json::value> outputs_;
  std::map<std::string, json::array> inputs_;
};

}  // namespace

std::map<std::string, json::array> rebuildModelInputs(const std::vector<kernel::Event>& events,
                                                      std::string_view loop) {
  Rebuilder r(loop);
  for (const auto& e : events) r.apply(e);
  return r.take();
}

}  // namespace loom::agent
