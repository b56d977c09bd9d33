#include "inspect/timeline.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "effects/step_ids.h"
#include "loom/agent/approval.h"
#include "loom/effects/taint.h"
#include "loom/kernel/execution_info.h"
#include "loom/util/clock.h"
#include "sweep/content_walker.h"

namespace loom::inspect {
namespace {

using kernel::Event;
using kernel::EventType;

// Thrown by a scan's visitor to stop it at a page's end.
struct PageFull {};

json::value memberOr(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr ? *v : json::value(nullptr);
}

bool isString(const json::value& v, std::string_view text) {
  return v.is_string() && v.as_string() == text;
}

json::array stringsToJson(const std::vector<std::string>& strings) {
  json::array a;
  for (const auto& s : strings) a.emplace_back(s);
  return a;
}

// {"address","size","digest","retained"} of the envelope at the trusted position; null when
// the step's output is not offloaded.
json::value envelopeJson(const Event& e) {
  auto envelope = sweep::trustedEnvelopeOf(e);
  if (!envelope) return nullptr;
  return json::object{{"address", envelope->address},
                      {"size", envelope->size},
                      {"digest", envelope->digest != nullptr ? *envelope->digest : nullptr},
                      {"retained", envelope->retain}};
}

json::object attemptJson(const Event& e) {
  return json::object{{"seq", e.seq},
                      {"at", formatTimestamp(e.atMillis)},
                      {"error", memberOr(e.data, "error")},
                      {"retryable", memberOr(e.data, "retryable")},
                      {"nextAttemptAt", memberOr(e.data, "nextAttemptAt")}};
}

// What a recorded step holds: its status, inline result or envelope, taint and attempts. The
// members a turn's tool frame and a workflow step share.
void applyStep(json::object& frame, const Event& e) {
  if (e.type == EventType::kStepFailed) {
    frame["attempts"].as_array().push_back(attemptJson(e));
    bool retryable = e.data.contains("retryable") && e.data.at("retryable").is_bool() &&
                     e.data.at("retryable").as_bool();
    frame["status"] = retryable ? "retrying" : "failed";
    return;
  }
  frame["status"] = "completed";
  frame["completedSeq"] = e.seq;  // `seq` stays the step's first event: where its item starts
  frame["completedAt"] = formatTimestamp(e.atMillis);
  json::value output = memberOr(e.data, "output");
  frame["taint"] = stringsToJson(effects::taintOrigins(output));
  frame["envelope"] = envelopeJson(e);
  frame["result"] = frame["envelope"].is_null() ? std::move(output) : json::value(nullptr);
  if (const auto* ms = e.data.if_contains("durationMs")) frame["durationMs"] = *ms;
}

json::object newStep(const Event& e) {
  return json::object{{"stepId", memberOr(e.data, "stepId")},
                      {"name", memberOr(e.data, "effectId")},
                      {"seq", e.seq},
                      {"at", formatTimestamp(e.atMillis)},
                      {"status", "running"},
                      {"result", nullptr},
                      {"envelope", nullptr},
                      {"taint", json::array{}},
                      {"attempts", json::array{}}};
}

json::object modelJson(const json::value& output) {
  const json::value& message = effects::untainted(output);
  json::object m;
  const json::object* o = message.if_object();
  for (std::string_view key : {"content", "toolCalls", "finishReason", "usage"}) {
    m[key] = o != nullptr ? memberOr(*o, key) : json::value(nullptr);
  }
  return m;
}

json::object runEventJson(const Event& e) {
  json::object item{{"kind", "event"},
                    {"seq", e.seq},
                    {"at", formatTimestamp(e.atMillis)},
                    {"type", kernel::eventTypeName(e.type)}};
  for (std::string_view key : {"reason", "waitingFor", "stepId", "wakeAt", "detail", "name",
                               "payload", "error", "output", "subject", "erased"}) {
    if (const auto* v = e.data.if_contains(key)) item[key] = *v;
  }
  return item;
}

// Builds the items of one page as the scan visits the log.
class TimelineBuilder {
 public:
  explicit TimelineBuilder(std::size_t maxItems) : maxItems_(maxItems) {}

  void apply(const Event& e) {
    bool isStep = e.type == EventType::kStepCompleted || e.type == EventType::kStepFailed;
    const auto* stepId = isStep ? e.data.if_contains("stepId") : nullptr;
    if (stepId == nullptr || !stepId->is_string()) {
      if (attachToTurn(e)) return;
      return addRunEvent(e);
    }
    std::string_view id(stepId->as_string());
    if (applyApprovalDeadline(e, id)) return;
    auto agentStep = effects::parseAgentStepId(id);
    if (!agentStep) return applyWorkflowStep(e, std::string(id));
    applyAgentStep(e, *agentStep);
  }

  TimelinePage take() { return std::move(page_); }

 private:
  // Starts a new item, or ends the page at `e` when it is full.
  json::object& startItem(const Event& e, json::object item) {
    if (page_.items.size() >= maxItems_) {
      page_.next = e.seq;
      throw PageFull{};
    }
    turnKey_.reset();
    return page_.items.emplace_back(std::move(item)).as_object();
  }

  void addRunEvent(const Event& e) { startItem(e, runEventJson(e)); }

  void applyWorkflowStep(const Event& e, const std::string& stepId) {
    // A failed attempt and the step's completion after it stay one item.
    json::object* last = page_.items.empty() ? nullptr : page_.items.back().if_object();
    if (last == nullptr || !isString(last->at("kind"), "step") ||
        !isString(last->at("stepId"), stepId)) {
      json::object step = newStep(e);
      step["kind"] = "step";
      last = &startItem(e, std::move(step));
    }
    applyStep(*last, e);
  }

  void applyAgentStep(const Event& e, const effects::AgentStepId& id) {
    std::pair<std::string, int64_t> key{id.loop, id.turn};
    if (turnKey_ != key) {
      startItem(e, json::object{{"kind", "turn"},
                                {"loop", id.loop},
                                {"turn", id.turn},
                                {"seq", e.seq},
                                {"at", formatTimestamp(e.atMillis)},
                                {"model", nullptr},
                                {"modelAttempts", json::array{}},
                                {"tools", json::array{}},
                                {"events", json::array{}},
                                {"compaction", false}});
      turnKey_ = key;
    }
    json::object& turn = page_.items.back().as_object();
    switch (id.kind) {
      case effects::AgentStepKind::kModel:
        if (e.type == EventType::kStepFailed) {
          turn["modelAttempts"].as_array().push_back(attemptJson(e));
        } else {
          turn["model"] = modelJson(memberOr(e.data, "output"));
        }
        return;
      case effects::AgentStepKind::kCompact:
        turn["compaction"] = true;
        return;
      case effects::AgentStepKind::kTool:
        applyStep(toolFrame(turn, e, id.toolIndex), e);
        return;
    }
  }

  static json::object& toolFrame(json::object& turn, const Event& e, int64_t index) {
    json::array& tools = turn["tools"].as_array();
    for (auto& t : tools) {
      if (t.as_object().at("index").as_int64() == index) return t.as_object();
    }
    json::object frame = newStep(e);
    frame["index"] = index;
    return tools.emplace_back(std::move(frame)).as_object();
  }

  // The current turn item when `stepId` is a step of it; null otherwise.
  json::object* currentTurnOf(std::string_view stepId) {
    auto id = effects::parseAgentStepId(stepId);
    if (!id || !turnKey_ || *turnKey_ != std::pair<std::string, int64_t>{id->loop, id->turn}) {
      return nullptr;
    }
    return &page_.items.back().as_object();
  }

  // The frame of tool call `toolStepId` in `turn` before (or without) a step of its own: its
  // name from the turn's model message.
  static json::object& pendingToolFrame(json::object& turn, const Event& e,
                                        const std::string& toolStepId) {
    auto id = effects::parseAgentStepId(toolStepId);
    int64_t index = id ? id->toolIndex : -1;
    json::object& frame = toolFrame(turn, e, index);
    if (isString(frame["status"], "running")) {
      frame["stepId"] = toolStepId;
      frame["status"] = "awaitingApproval";
      const auto* model = turn["model"].if_object();
      const auto* calls = model != nullptr ? model->if_contains("toolCalls") : nullptr;
      if (calls != nullptr && calls->is_array() && index >= 0 &&
          static_cast<std::size_t>(index) < calls->as_array().size()) {
        const auto* call = calls->as_array()[static_cast<std::size_t>(index)].if_object();
        if (call != nullptr) frame["name"] = memberOr(*call, "name");
      }
    }
    return frame;
  }

  // A run event that belongs to the current turn stays in its item: a park on one of its steps
  // (a retry's wait, an approval) and the approval decision (signal approve:<its tool step>).
  // So a turn's retries and approval are one card, not a new "turn" after each park.
  bool attachToTurn(const Event& e) {
    if (e.type == EventType::kExecutionParked) {
      const auto* stepId = e.data.if_contains("stepId");
      json::object* turn = stepId != nullptr && stepId->is_string()
                               ? currentTurnOf(std::string_view(stepId->as_string()))
                               : nullptr;
      if (turn == nullptr) return false;
      (*turn)["events"].as_array().push_back(runEventJson(e));
      return true;
    }
    if (e.type != EventType::kSignalReceived) return false;
    const auto* name = e.data.if_contains("name");
    if (name == nullptr || !name->is_string() ||
        !agent::isApprovalSignal(std::string_view(name->as_string()))) {
      return false;
    }
    std::string toolStepId(
        std::string_view(name->as_string()).substr(agent::kApprovalSignalPrefix.size()));
    json::object* turn = currentTurnOf(toolStepId);
    if (turn == nullptr) return false;
    json::object& frame = pendingToolFrame(*turn, e, toolStepId);
    json::value payload = memberOr(e.data, "payload");
    const auto* decision = payload.if_object();
    const auto* approved = decision != nullptr ? decision->if_contains("approved") : nullptr;
    bool yes = approved != nullptr && approved->is_bool() && approved->as_bool();
    json::object approval{{"at", formatTimestamp(e.atMillis)}, {"approved", yes}};
    if (decision != nullptr && decision->contains("reason"))
      approval["reason"] = decision->at("reason");
    frame["approval"] = std::move(approval);
    if (!yes && isString(frame["status"], "awaitingApproval")) frame["status"] = "denied";
    return true;
  }

  // `<tool step>:approvalDeadline` (its wakeAt) and `...:timedOut` are the approval's timer, not
  // steps of their own: the tool's frame shows the deadline and whether it passed.
  bool applyApprovalDeadline(const Event& e, std::string_view stepId) {
    constexpr std::string_view kDeadline = ":approvalDeadline";
    constexpr std::string_view kTimedOut = ":approvalDeadline:timedOut";
    bool timedOut = stepId.ends_with(kTimedOut);
    if (!timedOut && !stepId.ends_with(kDeadline)) return false;
    std::string toolStepId(
        stepId.substr(0, stepId.size() - (timedOut ? kTimedOut : kDeadline).size()));
    json::object* turn = currentTurnOf(toolStepId);
    if (turn == nullptr || e.type != EventType::kStepCompleted) return false;
    json::object& frame = pendingToolFrame(*turn, e, toolStepId);
    if (timedOut) {
      frame["approvalTimedOut"] = true;
      if (isString(frame["status"], "awaitingApproval")) frame["status"] = "approvalTimedOut";
      return true;
    }
    const auto* output = e.data.if_contains("output");
    const auto* wake = output != nullptr && output->is_object()
                           ? output->as_object().if_contains("wakeAt")
                           : nullptr;
    if (wake != nullptr && wake->is_int64()) {
      frame["approvalDeadline"] = formatTimestamp(wake->as_int64());
    }
    return true;
  }

  std::size_t maxItems_;
  TimelinePage page_;
  std::optional<std::pair<std::string, int64_t>> turnKey_;  // the turn the last item is
};

// The tool call `stepId` of a parked run asks for: {"tool", "arguments"} from its turn's model
// step, which sits a few events before the park (a full scan only when it does not).
json::object toolCallOf(const kernel::EventStore& store, const kernel::ExecutionInfo& info,
                        const std::string& stepId) {
  auto id = effects::parseAgentStepId(stepId);
  json::object call{{"tool", nullptr}, {"arguments", nullptr}};
  if (!id || id->kind != effects::AgentStepKind::kTool) return call;
  std::string modelStep = effects::modelStepId(id->loop, id->turn);
  auto find = [&](int64_t from) {
    bool found = false;
    store.scan(info.id, from, [&](const Event& e) {
      if (e.type != EventType::kStepCompleted || !isString(memberOr(e.data, "stepId"), modelStep)) return;
      const auto* output = e.data.if_contains("output");
      if (output == nullptr) return;
      const json::value& message = effects::untainted(*output);
      const auto* calls = message.is_object() ? message.as_object().if_contains("toolCalls")
                                              : nullptr;
      if (calls == nullptr || !calls->is_array()) return;
      const auto& list = calls->as_array();
      if (id->toolIndex < 0 || static_cast<std::size_t>(id->toolIndex) >= list.size()) return;
      const json::value& c = list[static_cast<std::size_t>(id->toolIndex)];
      if (!c.is_object()) return;
      call["tool"] = memberOr(c.as_object(), "name");
      call["arguments"] = memberOr(c.as_object(), "arguments");
      found = true;
    });
    return found;
  };
  constexpr int64_t kNearPark = 64;  // events before the park searched first
  if (!find(std::max<int64_t>(1, info.nextSeq - kNearPark)) && info.nextSeq > kNearPark) find(1);
  return call;
}

}  // namespace

TimelinePage timelinePage(const kernel::EventStore& store, const std::string& id,
                          int64_t fromSeq, std::size_t maxItems) {
  TimelineBuilder builder(maxItems);
  try {
    store.scan(id, fromSeq, [&](const Event& e) { builder.apply(e); });
  } catch (const PageFull&) {
    // the page is full: the scan stops here on purpose, `next` says where to go on
  }
  return builder.take();
}

std::optional<json::object> pendingApproval(const kernel::EventStore& store,
                                            const kernel::ExecutionInfo& info) {
  if (info.status != kernel::ExecutionStatus::kParked) return std::nullopt;
  auto park = kernel::currentPark(store, info);
  if (!park || park->reason != "approval") return std::nullopt;
  json::object call = toolCallOf(store, info, park->stepId);
  return json::object{
      {"execution", info.id},
      {"workflow", info.workflow},
      {"subject", info.subject ? json::value(*info.subject) : json::value(nullptr)},
      {"stepId", park->stepId},
      {"signal", "approve:" + park->stepId},
      {"tool", call["tool"]},
      {"arguments", call["arguments"]},
      {"deadline", park->wakeAtMillis ? json::value(formatTimestamp(*park->wakeAtMillis))
                                      : json::value(nullptr)}};
}

void UsageTally::apply(const Event& e) {
  nextSeq = e.seq + 1;
  if (e.type != EventType::kStepCompleted) return;
  const auto* stepId = e.data.if_contains("stepId");
  if (stepId == nullptr || !stepId->is_string()) return;
  auto id = effects::parseAgentStepId(std::string_view(stepId->as_string()));
  if (!id || id->kind == effects::AgentStepKind::kTool) return;
  ++modelTurns;
  const auto* output = e.data.if_contains("output");
  if (output == nullptr) return;
  const json::value& message = effects::untainted(*output);
  const auto* usage = message.is_object() ? message.as_object().if_contains("usage") : nullptr;
  if (usage == nullptr || !usage->is_object()) return;
  auto add = [&](std::string_view key, int64_t& sum) {
    const auto* n = usage->as_object().if_contains(key);
    if (n != nullptr && n->is_int64()) sum += n->as_int64();
  };
  add("inputTokens", inputTokens);
  add("outputTokens", outputTokens);
}

json::object UsageTally::toJson() const {
  return json::object{{"inputTokens", inputTokens},
                      {"outputTokens", outputTokens},
                      {"modelTurns", modelTurns}};
}

json::array sizeSeries(const kernel::EventStore& store, const std::string& id,
                       std::size_t maxPoints) {
  struct Point {
    int64_t seq, turn, logBytes, stateBytes;
  };
  std::vector<Point> all;
  kernel::ExecutionInfo info;
  info.id = id;
  int64_t turn = 0;
  store.scan(id, 1, [&](const Event& e) {
    int64_t outputBytes = -1;
    std::string text = kernel::toText(e, &outputBytes);
    kernel::applyEvent(info, e, static_cast<int64_t>(text.size()), outputBytes);
    const auto* stepId = e.data.if_contains("stepId");
    if (stepId != nullptr && stepId->is_string()) {
      auto agentStep = effects::parseAgentStepId(std::string_view(stepId->as_string()));
      if (agentStep) turn = std::max(turn, agentStep->turn);
    }
    all.push_back({e.seq, turn, info.logBytes, info.stateBytes});
  });
  json::array points;
  if (all.empty() || maxPoints == 0) return points;
  std::size_t stride = (all.size() + maxPoints - 1) / maxPoints;
  for (std::size_t i = stride - 1; i < all.size(); i += stride) {
    if (i + stride >= all.size()) break;  // the last point is the log's end, added below
    const Point& p = all[i];
    points.push_back(json::object{
        {"seq", p.seq}, {"turn", p.turn}, {"logBytes", p.logBytes}, {"stateBytes", p.stateBytes}});
  }
  const Point& last = all.back();
  points.push_back(json::object{{"seq", last.seq},
                                {"turn", last.turn},
                                {"logBytes", last.logBytes},
                                {"stateBytes", last.stateBytes}});
  return points;
}

bool citesBlob(const kernel::EventStore& store, const std::string& id,
               std::string_view address) {
  bool cited = false;
  try {
    store.scan(id, 1, [&](const Event& e) {
      auto envelope = sweep::trustedEnvelopeOf(e);
      if (envelope && envelope->address == address) {
        cited = true;
        throw PageFull{};
      }
    });
  } catch (const PageFull&) {
    // found: no need to read the rest of the log
  }
  return cited;
}

}  // namespace loom::inspect
