#include "loom/providers/scripted_model.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "effects/step_ids.h"
#include "loom/kernel/usage.h"
#include "loom/util/error.h"
#include "toml_json.h"

namespace loom::providers {
namespace {

json::value substituteTurn(const json::value& v, int64_t turn) {
  if (const auto* s = v.if_string()) {
    if (*s == "{turn}") return turn;
    std::string text(*s);
    for (auto at = text.find("{turn}"); at != std::string::npos; at = text.find("{turn}")) {
      text.replace(at, 6, std::to_string(turn));
    }
    return json::value(text);
  }
  if (const auto* o = v.if_object()) {
    json::object out;
    for (const auto& kv : *o) out[kv.key()] = substituteTurn(kv.value(), turn);
    return out;
  }
  if (const auto* a = v.if_array()) {
    json::array out;
    for (const auto& e : *a) out.push_back(substituteTurn(e, turn));
    return out;
  }
  return v;
}

json::value toolCallsMessage(const json::array& calls, int64_t turn) {
  json::array out;
  for (std::size_t j = 0; j < calls.size(); ++j) {
    const auto& c = calls[j].as_object();
    json::value args = c.contains("arguments") ? substituteTurn(c.at("arguments"), turn)
                                               : json::value(json::object{});
    out.push_back(json::object{{"id", "call_" + std::to_string(turn) + "_" + std::to_string(j)},
                               {"name", c.at("name")},
                               {"arguments", std::move(args)}});
  }
  return json::object{{"role", "assistant"}, {"toolCalls", std::move(out)}};
}

json::value answerMessage(const json::value& answer) {
  return json::object{{"role", "assistant"}, {"content", answer}, {"finishReason", "stop"}};
}

// Refuses a key of `o` that `accepted` does not list, naming it, where it is and what is
// accepted: a misspelt key (`content` for `answer`) would otherwise be dropped silently.
void checkKeys(const json::object& o, const std::string& where,
               std::initializer_list<std::string_view> accepted) {
  for (const auto& kv : o) {
    if (std::find(accepted.begin(), accepted.end(), kv.key()) != accepted.end()) continue;
    std::string list;
    for (std::string_view a : accepted)
      list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
    throw InvalidArgumentError(where + " has the unknown key \"" + std::string(kv.key()) +
                               "\"; the keys it takes are " + list);
  }
}

void checkCalls(const json::value& calls, const std::string& where) {
  if (!calls.is_array()) throw InvalidArgumentError(where + ".toolCalls must be an array");
  const auto& array = calls.get_array();
  for (std::size_t i = 0; i < array.size(); ++i) {
    const auto& c = array[i];
    if (!c.is_object() || !c.get_object().contains("name") || !c.at("name").is_string()) {
      throw InvalidArgumentError(where + ".toolCalls: each call needs a string \"name\"");
    }
    checkKeys(c.get_object(), where + ".toolCalls[" + std::to_string(i) + "]",
              {"name", "arguments"});
  }
}

// A turn's "usage": {"inputTokens", "outputTokens", "cachedInputTokens"?}, whole numbers, what
// the OpenAI model records from its server (docs/agent-apps.md, "Scripted models").
void checkUsage(const json::object& turn, const std::string& where) {
  const auto* usage = turn.if_contains("usage");
  if (usage == nullptr) return;
  if (!usage->is_object()) throw InvalidArgumentError(where + ".usage must be an object");
  checkKeys(usage->get_object(), where + ".usage",
            {"inputTokens", "outputTokens", "cachedInputTokens"});
  for (std::string_view key : {"inputTokens", "outputTokens", "cachedInputTokens"}) {
    const auto* n = usage->get_object().if_contains(key);
    if (n == nullptr && key == "cachedInputTokens") continue;
    if (n == nullptr || !n->is_int64() || n->get_int64() < 0 ||
        n->get_int64() > kernel::kMaxStepTokens) {
      throw InvalidArgumentError(where + ".usage." + std::string(key) +
                                 " must be a whole number from 0 to " +
                                 std::to_string(kernel::kMaxStepTokens));
    }
  }
}

json::value withUsage(json::value message, const json::object& turn) {
  if (const auto* usage = turn.if_contains("usage")) message.get_object()["usage"] = *usage;
  return message;
}

}  // namespace

ScriptedModel::ScriptedModel(std::string id, json::value script, std::string origin)
    : id_(std::move(id)), script_(std::move(script)), origin_(std::move(origin)) {
  if (!script_.is_object()) throw InvalidArgumentError("a model script must be an object");
  const auto& o = script_.get_object();
  checkKeys(o, "script", {"turns", "generate", "summary", "latencyMs"});
  if (const auto* latency = o.if_contains("latencyMs")) {
    if (!latency->is_int64() || latency->as_int64() < 0 || latency->as_int64() > 600'000) {
      throw InvalidArgumentError(
          "script.latencyMs must be a whole number of milliseconds from 0 to 600000");
    }
    latencyMillis_ = latency->as_int64();
  }
  if (const auto* turns = o.if_contains("turns")) {
    if (!turns->is_array()) throw InvalidArgumentError("script.turns must be an array");
    for (std::size_t i = 0; i < turns->get_array().size(); ++i) {
      const auto& t = turns->get_array()[i];
      std::string where = "script.turns[" + std::to_string(i) + "]";
      if (!t.is_object()) throw InvalidArgumentError(where + " must be an object");
      checkKeys(t.get_object(), where, {"toolCalls", "answer", "usage"});
      checkUsage(t.get_object(), where);
      if (const auto* c = t.get_object().if_contains("toolCalls")) checkCalls(*c, where);
      else if (!t.get_object().contains("answer")) {
        throw InvalidArgumentError(where + " needs \"toolCalls\" or \"answer\"");
      }
    }
    explicitTurns_ = static_cast<int64_t>(turns->get_array().size());
  }
  if (const auto* g = o.if_contains("generate")) {
    if (!g->is_object() || !g->get_object().contains("turns") || !g->at("turns").is_int64()) {
      throw InvalidArgumentError("script.generate needs an integer \"turns\"");
    }
    checkKeys(g->get_object(), "script.generate",
              {"turns", "toolCalls", "then", "answer", "usage"});
    checkUsage(g->get_object(), "script.generate");
    checkCalls(g->get_object().contains("toolCalls") ? g->at("toolCalls") : json::array{},
               "script.generate");
    if (const auto* then = g->get_object().if_contains("then")) {
      if (!then->is_array()) throw InvalidArgumentError("script.generate.then must be an array");
      for (std::size_t i = 0; i < then->get_array().size(); ++i) {
        const auto& t = then->get_array()[i];
        std::string where = "script.generate.then[" + std::to_string(i) + "]";
        if (!t.is_object() || !t.get_object().contains("toolCalls")) {
          throw InvalidArgumentError(where + " needs \"toolCalls\"");
        }
        checkKeys(t.get_object(), where, {"toolCalls"});
        checkCalls(t.at("toolCalls"), where);
      }
    }
  }
  if (!o.contains("turns") && !o.contains("generate")) {
    throw InvalidArgumentError("a model script needs \"turns\" or \"generate\"");
  }
}

json::value ScriptedModel::turnMessage(int64_t turn) const {
  const auto& o = script_.get_object();
  if (turn <= explicitTurns_) {
    const auto& t = o.at("turns").get_array()[static_cast<std::size_t>(turn - 1)].get_object();
    if (const auto* c = t.if_contains("toolCalls")) {
      return withUsage(toolCallsMessage(c->get_array(), turn), t);
    }
    return withUsage(answerMessage(t.at("answer")), t);
  }
  if (const auto* g = o.if_contains("generate")) {
    const auto& gen = g->get_object();
    int64_t last = gen.at("turns").as_int64();
    if (turn <= last && gen.contains("toolCalls")) {
      return withUsage(toolCallsMessage(gen.at("toolCalls").get_array(), turn), gen);
    }
    if (const auto* then = gen.if_contains("then")) {
      const auto& after = then->get_array();
      auto i = static_cast<std::size_t>(turn - std::max(last, explicitTurns_) - 1);
      if (i < after.size()) {
        return withUsage(toolCallsMessage(after[i].at("toolCalls").get_array(), turn), gen);
      }
    }
    return withUsage(answerMessage(gen.contains("answer") ? gen.at("answer") : json::value("Done.")),
                     gen);
  }
  throw InvalidArgumentError(origin_ + " has " + std::to_string(explicitTurns_) +
                             " turns and the run asked for turn " + std::to_string(turn) +
                             "; end the script with an {\"answer\": ...} turn (or raise its "
                             "turn count)");
}

json::value ScriptedModel::complete(const effects::EffectContext& ctx,
                                    const agent::ModelRequest& request) {
  calls_.fetch_add(1);
  if (request.purpose == "compact") {
    const auto& o = script_.get_object();
    std::size_t n = request.messages.size();
    json::value text = o.contains("summary") ? o.at("summary")
                                             : json::value("Earlier: " + std::to_string(n) +
                                                           " messages of tool calls and results.");
    return json::object{{"role", "assistant"}, {"content", text}};
  }
  auto step = effects::parseAgentStepId(ctx.stepId);
  int64_t turn = step ? step->turn : 1;
  if (latencyMillis_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(latencyMillis_));
  return turnMessage(turn);
}

json::value ScriptedModel::loadScript(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw NotFoundError("cannot read model script '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  if (path.size() >= 5 && path.substr(path.size() - 5) == ".toml") {
    return tomlToJson(text.str(), path);
  }
  return json::parse(text.str(), "model script '" + path + "'");
}

}  // namespace loom::providers
