// Shared set-up for agent-loop tests: a memory log, a scripted model, counting tools.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>

#include "loom/agent/agent_loop.h"
#include "loom/agent/agent_state.h"
#include "loom/effects/taint.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/providers/scripted_model.h"
#include "loom/workflow/runtime.h"
#include "support/faulty_event_store.h"
#include "support/recording_model.h"

namespace loom::testing {

class AgentFixture : public ::testing::Test {
 protected:
  void setUpAgent(json::value script, agent::AgentOptions options = {}) {
    scripted_ = std::make_shared<providers::ScriptedModel>("scripted", std::move(script));
    model_ = std::make_shared<RecordingModel>(scripted_);
    agent::registerModel(tasks_, model_);
    addTool("fetch_report", [this](const json::value& args) {
      countCall("fetch_report");
      std::string body(static_cast<std::size_t>(1500 + 10 * args.at("page").as_int64()), 'r');
      return json::value{{"page", args.at("page")}, {"body", body}};
    });
    options.model = "scripted";
    for (auto& [name, tool] : tools_) options.tools.push_back(tool->definition());
    options_ = options;
    agent::registerAgentWorkflow(workflows_, "research", options_);
  }

  void addTool(const std::string& name, std::function<json::value(const json::value&)> fn,
               bool requiresApproval = false) {
    addTool(agent::ToolDefinition{name, "test tool " + name, nullptr, false, requiresApproval},
            std::move(fn));
  }
  void addTool(agent::ToolDefinition def, std::function<json::value(const json::value&)> fn) {
    std::string name = def.name;
    auto tool = std::make_shared<agent::FunctionTool>(
        def, [fn](const effects::EffectContext&, const json::value& args) { return fn(args); });
    tools_[name] = tool;
    agent::registerTool(tasks_, tool);
  }

  // Counts a call of tool `name`. Thread-safe: the calls of one turn run concurrently
  // (agent.parallelToolCalls), so a tool must be; read toolCalls_ once the run has returned.
  void countCall(const std::string& name) {
    std::lock_guard lock(toolCallsMu_);
    ++toolCalls_[name];
  }

  std::unique_ptr<workflow::WorkflowRuntime> runtime(kernel::EventStore& store) {
    workflow::RuntimeOptions o;
    o.clock = clock_;
    o.retry = retry_;
    return std::make_unique<workflow::WorkflowRuntime>(store, workflows_, tasks_, nullptr, o);
  }

  std::vector<std::string> stepIds(const std::string& id) {
    std::vector<std::string> out;
    for (const auto& e : store_.read(id)) {
      if (e.type == kernel::EventType::kStepCompleted) {
        out.push_back(std::string(e.data.at("stepId").as_string()) + "|" +
                      std::string(e.data.at("taskKind").as_string()) + "|" +
                      std::string(e.data.at("effectId").as_string()));
      }
    }
    return out;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  workflow::DurableRetry retry_;  // execution.retry of the runtimes runtime() makes
  kernel::MemoryEventStore store_;
  workflow::WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  std::shared_ptr<providers::ScriptedModel> scripted_;
  std::shared_ptr<RecordingModel> model_;
  std::map<std::string, std::shared_ptr<agent::FunctionTool>> tools_;
  std::mutex toolCallsMu_;
  std::map<std::string, int> toolCalls_;  // GUARDED_BY(toolCallsMu_) while a run goes on
  agent::AgentOptions options_;
};

// Both model-input journal modes, as test parameters named "delta" and "full".
inline auto bothJournalModes() {
  return ::testing::Values(agent::ModelInputMode::kDelta, agent::ModelInputMode::kFull);
}
inline std::string journalModeName(const ::testing::TestParamInfo<agent::ModelInputMode>& info) {
  return info.param == agent::ModelInputMode::kDelta ? "delta" : "full";
}

inline json::value generatorScript(int64_t turns) {
  return json::value{
      {"generate",
       {{"turns", turns},
        {"toolCalls",
         json::array{json::object{{"name", "fetch_report"}, {"arguments", {{"page", "{turn}"}}}}}},
        {"answer", "Report complete."}}}};
}

}  // namespace loom::testing
