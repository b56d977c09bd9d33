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
  appended_.push_back(std::move(entry));  // full mode too: checkpoints read it (pending())
}

void ModelInputJournal::noteCompaction(std::string_view compactStep, int64_t keepHead,
                                       int64_t keepTail) {
  compaction_ = json::object{{"step", compactStep}, {"keepHead", keepHead}, {"keepTail", keepTail}};
}

json::value ModelInputJournal::take(std::string_view stepId, const json::SharedArray& messages) {
  json::object d;
  if (mode_ == ModelInputMode::kFull) {
    d["messages"] = messages.toArray();  // moved in (an initializer list would copy it)
  } else {
    d = {{"since", since_ ? json::value(*since_) : json::value()},
         {"appended", std::move(appended_)}};
    if (!compaction_.is_null()) d["compaction"] = std::move(compaction_);
  }
  appended_ = {};
  compaction_ = nullptr;
  since_ = std::string(stepId);
  return d;
}

json::value ModelInputJournal::pending() const {
  return json::object{{"since", since_ ? json::value(*since_) : json::value()},
                      {"appended", appended_}};
}

void ModelInputJournal::restore(const json::value& pending) {
  const auto* o = pending.if_object();
  const auto* since = o ? o->if_contains("since") : nullptr;
  const auto* appended = o ? o->if_contains("appended") : nullptr;
  if (since == nullptr || !(since->is_null() || since->is_string()) || appended == nullptr ||
      !appended->is_array()) {
    throw InvalidArgumentError("the pending model input is not {\"since\", \"appended\"}");
  }
  since_.reset();
  if (since->is_string()) since_ = std::string(since->get_string());
  appended_ = appended->get_array();
  compaction_ = nullptr;
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

namespace {

// The messages of a rebuilt input: the messages themselves.
struct FullMessages {
  json::array messages;

  static FullMessages fromArray(const json::array& a) { return {a}; }
  std::size_t size() const { return messages.size(); }
  void push(json::value message) { messages.push_back(std::move(message)); }
  // Keeps the first `head` and last `tail` messages around `summary(summarized taint)`.
  template <typename Summary>
  FullMessages compacted(std::size_t head, std::size_t tail, Summary summary) && {
    auto& m = messages;
    std::vector<std::string> origins;
    for (auto it = m.begin() + head; it != m.end() - tail; ++it) {
      addTaintOrigins(origins, messageTaint(*it));
    }
    json::array out(m.begin(), m.begin() + head);
    out.push_back(summary(origins));
    out.insert(out.end(), std::make_move_iterator(m.end() - tail),
               std::make_move_iterator(m.end()));
    return {std::move(out)};
  }
};

// The messages of a rebuilt input as their sizes and taint only (TranscriptSizer).
struct SizedMessages {
  struct Info {
    int64_t bytes;
    std::vector<std::string> taint;
  };
  std::vector<Info> infos;
  int64_t bytes = 0;  // sum of infos' bytes

  static SizedMessages fromArray(const json::array& a) {
    SizedMessages out;
    for (const auto& m : a) out.push(m);
    return out;
  }
  std::size_t size() const { return infos.size(); }
  void push(const json::value& message) {
    infos.push_back({static_cast<int64_t>(json::textBytes(message)), messageTaint(message)});
    bytes += infos.back().bytes;
  }
  template <typename Summary>
  SizedMessages compacted(std::size_t head, std::size_t tail, Summary summary) && {
    std::vector<std::string> origins;
    for (std::size_t i = head; i < infos.size() - tail; ++i)
      addTaintOrigins(origins, infos[i].taint);
    SizedMessages out;
    for (std::size_t i = 0; i < head; ++i) out.pushInfo(std::move(infos[i]));
    out.push(summary(origins));
    for (std::size_t i = infos.size() - tail; i < infos.size(); ++i)
      out.pushInfo(std::move(infos[i]));
    return out;
  }
  int64_t textBytes() const {
    return 2 + bytes + (infos.empty() ? 0 : static_cast<int64_t>(infos.size()) - 1);
  }

 private:
  void pushInfo(Info info) {
    bytes += info.bytes;
    infos.push_back(std::move(info));
  }
};

// The rebuilding rules (model_input.h), over either representation of the messages.
template <typename Messages>
class Rebuild {
 public:
  explicit Rebuild(std::string_view loop) : loop_(loop) {}

  const Messages* apply(const kernel::Event& e) {
    if (e.type != kernel::EventType::kStepCompleted) return nullptr;
    const auto* step = e.data.if_contains("stepId");
    if (step == nullptr || !step->is_string()) return nullptr;  // sealed or erased
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

  const std::string& lastModelStep() const { return currentStep_; }
  const Messages& last() const { return current_; }
  // The input a model step journaled with delta `pending` would rebuild to; moves last() out.
  Messages after(const json::object& pending) { return rebuild("(the next model step)", pending); }

 private:
  Messages rebuild(const std::string& stepId, const json::object& input) {
    if (const auto* full = input.if_contains("messages")) {
      return Messages::fromArray(full->as_array());
    }
    const json::value* sinceField = input.if_contains("since");
    const json::value* appended = input.if_contains("appended");
    if (sinceField == nullptr || appended == nullptr || !appended->is_array()) {
      throw DataLossError("model step '" + stepId +
                          "' journaled an input that is not a model input of an agent loop (no "
                          "\"messages\", or no \"since\" and \"appended\" array): a workflow "
                          "step named like an agent's model turn? Rename it, or read its log with "
                          "`loom log`");
    }
    Messages base;
    const auto& since = *sinceField;
    if (since.is_string()) {
      if (since.get_string() != currentStep_) {
        throw DataLossError(
            "model step '" + stepId + "' is journaled as a delta from step '" +
            std::string(since.get_string()) + "', but the model step before it " +
            (currentStep_.empty() ? "is not recorded" : "is '" + currentStep_ + "'"));
      }
      base = std::move(current_);
    }
    for (const auto& entry : appended->get_array()) base.push(resolve(stepId, entry));
    if (const auto* c = input.if_contains("compaction")) {
      base = compact(stepId, std::move(base), c->as_object());
    }
    return base;
  }

  json::value resolve(const std::string& stepId, const json::value& entry) const {
    const auto& o = entry.as_object();
    const auto* from = o.if_contains("fromStep");
    if (from == nullptr) return entry;
    const json::value& output = recorded(stepId, std::string(from->as_string()));
    if (o.contains("toolCallId")) return writeBack(o.at("toolCallId").as_string(), output);
    return output;
  }

  Messages compact(const std::string& stepId, Messages base, const json::object& c) const {
    int64_t head = c.at("keepHead").as_int64(), tail = c.at("keepTail").as_int64();
    int64_t n = static_cast<int64_t>(base.size());
    if (head < 0 || tail < 0 || head + tail > n) {
      throw DataLossError("model step '" + stepId + "' journals a compaction outside its input");
    }
    const json::value& summary = recorded(stepId, std::string(c.at("step").as_string()));
    return std::move(base).compacted(
        static_cast<std::size_t>(head), static_cast<std::size_t>(tail),
        [&](const std::vector<std::string>& origins) { return summaryMessage(summary, origins); });
  }

  const json::value& recorded(const std::string& stepId, const std::string& from) const {
    auto it = outputs_.find(from);
    if (it == outputs_.end()) {
      throw DataLossError("model step '" + stepId + "' refers to step '" + from +
                          "', which is not recorded between it and the model step before it");
    }
    return it->second;
  }

  std::string loop_;
  std::string currentStep_;
  Messages current_;
  // The outputs a delta may refer to: the last model step's and those recorded after it.
  std::unordered_map<std::string, json::value> outputs_;
};

}  // namespace

struct ModelInputRebuilder::Impl : Rebuild<FullMessages> {
  using Rebuild::Rebuild;
};
struct TranscriptSizer::Impl : Rebuild<SizedMessages> {
  using Rebuild::Rebuild;
};

ModelInputRebuilder::ModelInputRebuilder(std::string_view loop)
    : impl_(std::make_unique<Impl>(loop)) {}
ModelInputRebuilder::~ModelInputRebuilder() = default;
ModelInputRebuilder::ModelInputRebuilder(ModelInputRebuilder&&) noexcept = default;
ModelInputRebuilder& ModelInputRebuilder::operator=(ModelInputRebuilder&&) noexcept = default;

const json::array* ModelInputRebuilder::apply(const kernel::Event& e) {
  const FullMessages* m = impl_->apply(e);
  return m ? &m->messages : nullptr;
}
const std::string& ModelInputRebuilder::lastModelStep() const { return impl_->lastModelStep(); }
const json::array& ModelInputRebuilder::lastInput() const { return impl_->last().messages; }

json::array ModelInputRebuilder::inputAfter(const json::value& pending) && {
  return std::move(impl_->after(pending.as_object()).messages);
}

TranscriptSizer::TranscriptSizer(std::string_view loop) : impl_(std::make_unique<Impl>(loop)) {}
TranscriptSizer::~TranscriptSizer() = default;
TranscriptSizer::TranscriptSizer(TranscriptSizer&&) noexcept = default;
TranscriptSizer& TranscriptSizer::operator=(TranscriptSizer&&) noexcept = default;

bool TranscriptSizer::apply(const kernel::Event& e) { return impl_->apply(e) != nullptr; }
int64_t TranscriptSizer::bytes() const {
  return impl_->lastModelStep().empty() ? 0 : impl_->last().textBytes();
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
