#include "workload.h"

#include "effects/step_ids.h"
#include "loom/agent/agent_loop.h"
#include "loom/agent/model.h"
#include "loom/providers/scripted_model.h"
#include "loom/util/error.h"

namespace loom::sim {

json::value drawPlan(Rng& rng) {
  json::array ops;
  int64_t n = rng.between(2, 7);
  for (int64_t i = 0; i < n; ++i) {
    switch (rng.below(9)) {
      case 0:
      case 1:
      case 2:  // a shared key makes identical bytes in other runs and subjects
        ops.push_back(json::object{{"op", "fetch"},
                                   {"size", rng.pick<int64_t>({64, 600, 3000, 20000})},
                                   {"key", rng.chance(50) ? "shared" + std::to_string(rng.below(3))
                                                          : "own" + std::to_string(rng.next())}});
        break;
      case 3:
        ops.push_back(json::object{{"op", "think"}});
        break;
      case 4:
        ops.push_back(json::object{{"op", "flaky"}, {"fails", rng.between(1, 3)}});
        break;
      case 5:
        ops.push_back(json::object{{"op", "sleep"}, {"ms", rng.pick<int64_t>({10, 5000, 90000})}});
        break;
      case 6:
        ops.push_back(json::object{{"op", "approval"}});
        break;
      case 7:
        ops.push_back(json::object{{"op", "signal"}});
        break;
      default:
        ops.push_back(json::object{{"op", "fetch"}, {"size", 2000}, {"key", "shared0"}});
    }
  }
  return json::object{{"ops", std::move(ops)}};
}

void addAgentOp(json::value& plan, Rng& rng) {
  json::array& ops = plan.at("ops").as_array();
  std::size_t at = static_cast<std::size_t>(rng.below(ops.size() + 1));
  ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(at), json::object{{"op", "agent"}});
}

std::vector<std::string> signalsOf(const json::value& plan) {
  std::vector<std::string> names;
  const json::array& ops = plan.at("ops").as_array();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    std::string step = "op" + std::to_string(i);
    if (ops[i].at("op") == "approval") names.push_back("approve:" + step);
    if (ops[i].at("op") == "signal") names.push_back("go:" + step);
    if (ops[i].at("op") == "agent") {
      names.push_back("approve:" + effects::toolStepId("agent" + step, kAgentPageTurns + 1, 0));
    }
  }
  return names;
}

std::string fetchedText(const std::string& key, int64_t size) {
  std::string text;
  while (static_cast<int64_t>(text.size()) < size) {
    text += key + " line " + std::to_string(text.size()) + "; ";
  }
  text.resize(static_cast<std::size_t>(size));
  return text;
}

namespace {

agent::AgentOptions agentOptions() {
  agent::AgentOptions options;
  options.model = std::string(kAgentModel);
  options.tools = {{.name = std::string(kPageTool), .description = "reads a page"},
                   {.name = std::string(kPublishTool),
                    .description = "publishes the report",
                    .requiresApproval = true}};
  options.maxTurns = kAgentPageTurns + 3;
  options.parallelToolCalls = 1;  // threads would make the schedule depend on timing
  return options;
}

// The agent op's model: the scripted one, behind the re-run check.
class SimModel : public agent::Model {
 public:
  explicit SimModel(std::function<void(const effects::EffectContext&)> onEffect)
      : onEffect_(std::move(onEffect)),
        scripted_(
            std::string(kAgentModel),
            json::object{
                {"generate",
                 json::object{
                     {"turns", kAgentPageTurns},
                     {"toolCalls",
                      json::array{json::object{{"name", kPageTool},
                                               {"arguments", json::object{{"page", "{turn}"}}}},
                                  json::object{{"name", kPageTool},
                                               {"arguments", json::object{{"page", "index"}}}}}},
                     {"then",
                      json::array{json::object{
                          {"toolCalls", json::array{json::object{{"name", kPublishTool}}}}}}},
                     {"answer", "published"}}}}) {}
  const std::string& id() const override { return scripted_.id(); }
  json::value complete(const effects::EffectContext& ctx,
                       const agent::ModelRequest& request) override {
    onEffect_(ctx);
    return scripted_.complete(ctx, request);
  }

 private:
  std::function<void(const effects::EffectContext&)> onEffect_;
  providers::ScriptedModel scripted_;
};

json::value runPlan(workflow::WorkflowContext& ctx) {
  const json::array& ops = ctx.input().at("ops").as_array();
  int64_t done = 0;
  std::string lastModel;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const json::object& op = ops[i].as_object();
    std::string step = "op" + std::to_string(i);
    std::string_view kind = op.at("op").as_string();
    // Tool calls and model turns are agent frames (effects/step_ids.h): claim-check offloads
    // only those.
    int64_t turn = static_cast<int64_t>(i) + 1;
    if (kind == "fetch") {
      ctx.effect(effects::toolStepId("sim", turn, 0), kFetchTool, op);
    } else if (kind == "think") {
      // Journaled as an agent loop journals a model turn: a delta since the previous one.
      std::string stepId = effects::modelStepId("sim", turn);
      json::value journal = json::object{
          {"since", lastModel.empty() ? json::value(nullptr) : json::value(lastModel)},
          {"appended", json::array{json::object{{"role", "user"}, {"content", step}}}}};
      workflow::WorkflowContext::EffectOptions options;
      options.journalInput = &journal;
      ctx.effect(stepId, "sim.think", json::object{{"turn", i}}, options);
      lastModel = stepId;
    } else if (kind == "flaky") {
      ctx.effect(effects::toolStepId("sim", turn, 0), "sim.flaky", op);
    } else if (kind == "sleep") {
      ctx.sleep(step, std::chrono::milliseconds(op.at("ms").as_int64()));
    } else if (kind == "approval") {
      ctx.park("approval", step, "approve:" + step);
    } else if (kind == "signal") {
      ctx.awaitSignal("go:" + step);
    } else if (kind == "agent") {
      agent::agentLoop(ctx, "agent" + step, agentOptions(), json::value("write the report"));
    }
    ++done;
  }
  return json::object{{"ops", done}};
}

}  // namespace

void registerWorkload(workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks,
                      std::function<void(const effects::EffectContext&)> onEffect) {
  workflows.add(std::string(kWorkflow), "the simulator's agent: a plan of steps", runPlan);
  tasks.add({.id = std::string(kFetchTool), .kind = "tool", .description = "fetches a page"},
            [onEffect](const effects::EffectContext& c, json::value in) -> json::value {
              onEffect(c);
              return json::value(
                  fetchedText(std::string(in.at("key").as_string()), in.at("size").as_int64()));
            });
  tasks.add({.id = "sim.think", .kind = "llm", .description = "a model turn"},
            [onEffect](const effects::EffectContext& c, json::value in) -> json::value {
              onEffect(c);
              return json::object{{"thought", "turn " + json::toText(in.at("turn"))}};
            });
  agent::registerModel(tasks, std::make_shared<SimModel>(onEffect));
  auto page = std::make_shared<agent::FunctionTool>(
      agentOptions().tools[0],
      [onEffect](const effects::EffectContext& c, const json::value& args) -> json::value {
        onEffect(c);
        std::string page = json::toText(args.at("page"));
        return json::value(fetchedText("page " + page, page == "\"index\"" ? 2500 : 900));
      });
  auto publish = std::make_shared<agent::FunctionTool>(
      agentOptions().tools[1],
      [onEffect](const effects::EffectContext& c, const json::value&) -> json::value {
        onEffect(c);
        return json::object{{"published", true}};
      });
  agent::registerTool(tasks, page);
  agent::registerTool(tasks, publish);
  tasks.add(
      {.id = "sim.flaky", .kind = "tool", .description = "fails retryably a few times"},
      [onEffect](const effects::EffectContext& c, json::value in) -> json::value {
        onEffect(c);
        if (c.attempt <= in.at("fails").as_int64()) {
          throw UnavailableError("sim.flaky: busy (attempt " + std::to_string(c.attempt) + ")");
        }
        return json::object{{"attempts", c.attempt}};
      });
}

}  // namespace loom::sim
