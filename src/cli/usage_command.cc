// `loom usage --by subject|workflow|model [--since T] [--json]`: the model tokens and cost
// the runs recorded (docs/observability.md), added up from each run's metadata (by subject or
// workflow) or from its model steps' "usage" (by model: a run may call several models).
#include <CLI/CLI.hpp>
#include <map>
#include <set>

#include "command.h"
#include "inspect/usage_text.h"
#include "text.h"

namespace loom::cli {
namespace {

struct UsageArgs {
  std::string by = "workflow";
  std::string since;
  bool json = false;
};

struct Group {
  int64_t runs = 0;
  kernel::TokenUsage usage;
};

// The groups by key; `runs`: the runs counted (a run that called two models is one).
std::map<std::string, Group> groups(kernel::EventStore& store, const UsageArgs& a,
                                    int64_t& runs) {
  std::optional<int64_t> since;
  if (!a.since.empty()) since = parseSinceMillis(a.since, systemClock()->nowMillis());
  std::map<std::string, Group> out;
  kernel::forEachExecution(store, {}, [&](const kernel::ExecutionInfo& info) {
    if ((since && info.startedAtMillis < *since) || info.usage.modelTurns == 0) return;
    ++runs;
    if (a.by != "model") {
      Group& g = out[a.by == "subject" ? info.subject.value_or("-") : info.workflow];
      ++g.runs;
      g.usage.add(info.usage);
      return;
    }
    std::set<std::string> models;  // the run counts once per model it called
    store.scan(info.id, 1, [&](const kernel::Event& e) {
      if (e.type != kernel::EventType::kStepCompleted) return;
      auto usage = kernel::stepUsage(e.data);  // clear in a sealed step too
      if (!usage) return;
      std::string model(e.data.at("usage").at("model").as_string());
      out[model].usage.add(*usage);
      if (models.insert(model).second) ++out[model].runs;
    });
  });
  return out;
}

json::object groupJson(const std::string& key, const Group& g) {
  json::object o = kernel::toJson(g.usage);
  o.emplace("key", key);
  o.emplace("runs", g.runs);
  return o;
}

}  // namespace

Action setupUsage(CLI::App& command, HomeSession& session) {
  auto args = std::make_shared<UsageArgs>();
  command.add_option("--by", args->by, "Add up by data subject, workflow (or agent) or model")
      ->check(CLI::IsMember({"subject", "workflow", "model"}))
      ->default_str("workflow");
  command.add_option("--since", args->since,
                     "Only runs started at or after this time (RFC 3339) or this long ago "
                     "(24h, 7d)")
      ->type_name("T");
  command.add_flag("--json", args->json,
                   "Print one JSON object {\"by\", \"groups\": [{\"key\", \"runs\", "
                   "\"inputTokens\", \"outputTokens\", \"cachedInputTokens\", \"tokens\", "
                   "\"costUsd\", \"modelTurns\"}], \"total\": {the same but \"key\"}}");
  addConfigOption(command, session);
  command.footer(
      "What the runs' model steps recorded when they ran: the tokens their servers reported\n"
      "and the cost at the observability.prices of that time (a price changed later does not\n"
      "change it). A replayed step is never counted again. A run without a subject is \"-\".\n"
      "--by model reads each run's log (a run may call several models); the others read only\n"
      "the runs' metadata. Runs whose logs retention archived are not counted.");
  return [&session, args] {
    Group total;
    auto byKey = groups(session.store(false), *args, total.runs);
    json::array out;
    std::vector<std::vector<std::string>> rows = {
        {args->by == "subject" ? "SUBJECT" : args->by == "model" ? "MODEL" : "WORKFLOW", "RUNS",
         "TURNS", "INPUT", "OUTPUT", "CACHED", "COST"}};
    auto row = [&](const std::string& key, const Group& g) {
      rows.push_back({key, std::to_string(g.runs), std::to_string(g.usage.modelTurns),
                      std::to_string(g.usage.inputTokens), std::to_string(g.usage.outputTokens),
                      std::to_string(g.usage.cachedInputTokens),
                      inspect::dollars(g.usage.costNanoUsd)});
    };
    for (const auto& [key, g] : byKey) {
      total.usage.add(g.usage);
      out.push_back(groupJson(key, g));
      row(key, g);
    }
    if (args->json) {
      json::object totalJson = kernel::toJson(total.usage);
      totalJson.emplace("runs", total.runs);
      session.out() << json::toText(json::object{
                           {"by", args->by}, {"groups", std::move(out)}, {"total", totalJson}})
                    << std::endl;
      return kExitOk;
    }
    if (byKey.empty()) {
      session.out() << "no run recorded model usage" << (args->since.empty() ? "" : " since then")
                    << std::endl;
      return kExitOk;
    }
    row("total", total);
    session.out() << alignedTable(rows) << std::flush;
    return kExitOk;
  };
}

}  // namespace loom::cli
