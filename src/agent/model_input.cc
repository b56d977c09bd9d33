#include "loom/agent/model_input.h"

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

json::value ModelInputJournal::take(std::string_view stepId, const json::SharedArray& messages) {
  if (mode_ == ModelInputMode::kFull) {
    json::object full;
    full["messages"] = messages.toArray();  // moved in (an initializer list would copy it)
    return full;
  }
  json::object d{{"since", since_ ? json::value(*since_) : json::value()},
                 {"appended", std::move(appended_)}};
  if (!compaction_.is_null()) d["compaction"] = std::move(compaction_);
  appended_ = {};
  compaction_ = nullptr;
  since_ = std::string(stepId);
  return d;
}

json::value ModelInputJournal::compactionInput(const json::SharedArray& messages, int64_t keepHead,
                                               int64_t keepTail) const {
  int64_t n = static_cast<int64_t>(messages.size());
  if (mode_ == ModelInputMode::kFull) {
    return json::object{{"messages", messages.slice(keepHead, n - keepTail)}};
  }
  return json::object{{"since", since_ ? json::value(*since_) : json::value()},
                      {"appended", appended_},
                      {"range", json::array{keepHead, n - keepTail}}};
}

const json::array* ModelInputRebuilder::apply(const kernel::Event& e) {
  if (e.type != kernel::EventType::kStepCompleted) return nullptr;
  const auto* step = e.data.if_contains("stepId");
  if (step == nullptr || !step->is_string()) return nullptr;  // sealed or erased: nothing here
  std::string stepId(step->get_string());
  auto id = effects::parseAgentStepId(stepId);
  if (!id || id->loop != loop_) return nullptr;
  if (id->kind != effects::AgentStepKind::kModel) {
    outputs_[stepId] = e.data.at("output");
    return nullptr;
  }
  const auto* input = e.data.if_contains("input");
  if (input == nullptr || !input->is_object()) {
    throw DataLossError("model step '" + stepId + "' has no journaled input to rebuild");
  }
  current_ = rebuild(stepId, input->get_object());
  currentStep_ = stepId;
  // Later deltas refer only to this step's output and to steps recorded after it.
  outputs_.clear();
  outputs_[stepId] = e.data.at("output");
  return &current_;
}

json::array ModelInputRebuilder::rebuild(const std::string& stepId, const json::object& input) {
  if (const auto* full = input.if_contains("messages")) return full->as_array();
  json::array base;
  const auto& since = input.at("since");
  if (since.is_string()) {
    if (since.get_string() != currentStep_) {
      throw DataLossError("model step '" + stepId + "' is journaled as a delta from step '" +
                          std::string(since.get_string()) + "', but the model step before it " +
                          (currentStep_.empty() ? "is not recorded" : "is '" + currentStep_ + "'"));
    }
    base = std::move(current_);
  }
  for (const auto& entry : input.at("appended").as_array()) {
    base.push_back(resolve(stepId, entry));
  }
  if (const auto* c = input.if_contains("compaction"))
    base = compact(stepId, std::move(base), c->as_object());
  return base;
}

json::value ModelInputRebuilder::resolve(const std::string& stepId,
                                         const json::value& entry) const {
  const auto& o = entry.as_object();
  const auto* from = o.if_contains("fromStep");
  if (from == nullptr) return entry;
  const json::value& output = recorded(stepId, std::string(from->as_string()));
  if (o.contains("toolCallId")) return writeBack(o.at("toolCallId").as_string(), output);
  return output;
}

json::array ModelInputRebuilder::compact(const std::string& stepId, json::array base,
                                         const json::object& c) const {
  int64_t head = c.at("keepHead").as_int64(), tail = c.at("keepTail").as_int64();
  int64_t n = static_cast<int64_t>(base.size());
  if (head < 0 || tail < 0 || head + tail > n) {
    throw DataLossError("model step '" + stepId + "' journals a compaction outside its input");
  }
  json::SharedArray middle(json::array(base.begin() + head, base.end() - tail));
  json::array out(base.begin(), base.begin() + head);
  out.push_back(summaryMessage(recorded(stepId, std::string(c.at("step").as_string())), middle));
  out.insert(out.end(), std::make_move_iterator(base.end() - tail),
             std::make_move_iterator(base.end()));
  return out;
}

const json::value& ModelInputRebuilder::recorded(const std::string& stepId,
                                                 const std::string& from) const {
  auto it = outputs_.find(from);
  if (it == outputs_.end()) {
    throw DataLossError("model step '" + stepId + "' refers to step '" + from +
                        "', which is not recorded between it and the model step before it");
  }
  return it->second;
}

std::map<std::string, json::array> rebuildModelInputs(const std::vector<kernel::Event>& events,
                                                      std::string_view loop) {
  ModelInputRebuilder r(loop);
  std::map<std::string, json::array> inputs;
  for (const auto& e : events) {
    if (const json::array* input = r.apply(e)) inputs[r.lastModelStep()] = *input;
  }
  return inputs;
}

}  // namespace loom::agent
