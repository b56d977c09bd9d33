#include "claim_check_bench/claim_check_bench.h"

#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include "loom/agent/agent_loop.h"
#include "loom/agent/agent_state.h"
#include "loom/app/app.h"
#include "loom/content/memory_content_store.h"
#include "loom/providers/scripted_model.h"
#include "loom/util/error.h"
#include "util/markdown.h"

namespace loom::claim_check_bench {
namespace {

constexpr const char* kWords[] = {"revenue",  "quarter", "growth",    "margin",  "region",
                                  "north",    "south",   "customer",  "churn",   "pipeline",
                                  "forecast", "cost",    "headcount", "product", "launch",
                                  "risk",     "audit",   "report"};

}  // namespace

json::value reportFor(uint32_t seed, int64_t page) {
  std::mt19937 rng(seed * 7919u + static_cast<uint32_t>(page));
  std::size_t target = 1500 + rng() % 2501;
  json::object report{{"id", "r-" + std::to_string(page)},
                      {"title", "Quarterly report, page " + std::to_string(page)},
                      {"page", page}};
  std::size_t base = json::textBytes(report) + 10;  // ,"body":""
  std::string body;
  while (body.size() + base < target) {
    body += kWords[rng() % (sizeof kWords / sizeof *kWords)];
    body += ' ';
  }
  body.resize(target > base ? target - base : 0);
  report["body"] = body;
  return report;
}

namespace {

double zstdRatio(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  std::size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  if (ZSTD_isError(n) || n == 0) return 0;
  return static_cast<double>(text.size()) / static_cast<double>(n);
}

struct TempHome {
  TempHome() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("loom-bench-cc-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
  }
  ~TempHome() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path path;
};

ClaimCheckBenchRow runRow(const ClaimCheckBenchOptions& o, int64_t turns, const std::string& cc,
                          const std::string& journal, const std::string& store) {
  TempHome home;
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  json::value script{
      {"generate",
       {{"turns", turns},
        {"toolCalls",
         json::array{json::object{{"name", "fetch_report"}, {"arguments", {{"page", "{turn}"}}}}}},
        {"answer", "The reports are summarized."}}}};
  agent::registerModel(tasks, std::make_shared<providers::ScriptedModel>("scripted", script));
  agent::ToolDefinition def{"fetch_report", "Fetches one page of the quarterly report.", nullptr};
  uint32_t seed = o.seed;
  agent::registerTool(tasks, std::make_shared<agent::FunctionTool>(
                                 def, [seed](const effects::EffectContext&, const json::value& a) {
                                   return reportFor(seed, a.at("page").as_int64());
                                 }));
  agent::AgentOptions agentOptions;
  agentOptions.model = "scripted";
  agentOptions.tools = {def};
  agentOptions.maxTurns = turns + 1;
  agentOptions.modelInput = agent::modelInputModeFromName(journal);
  agent::registerAgentWorkflow(workflows, "research", agentOptions);

  app::Config config;
  config.storage.home = home.path.string();
  config.storage.eventStore.kind = store;
  config.storage.eventStore.durability = "full";
  config.storage.contentStore.kind = store == "memory" ? "memory" : "filesystem";
  config.execution.journal.modelInput = journal;
  if (cc != "off") {
    middleware::ClaimCheckConfig c;
    c.toolIds = std::vector<std::string>{"fetch_report"};
    if (cc == "on-no-preview") c.preview = std::nullopt;
    config.execution.claimCheck = std::move(c);
  }
  auto started = std::chrono::steady_clock::now();
  auto app = app::boot(app::defineConfig(std::move(config)), workflows, tasks);
  auto r = app->runtime().start("research", json::value("Summarize the quarterly report."),
                                {.id = "bench"});
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (r.status != kernel::ExecutionStatus::kCompleted) {
    throw InternalError("bench run ended " + std::string(kernel::statusName(r.status)));
  }
  std::string state = json::toText(agent::foldAgentState(app->store().read("bench"), "research"));
  ClaimCheckBenchRow row{turns,
                         cc,
                         journal,
                         store,
                         static_cast<int64_t>(state.size()),
                         app->store().info("bench")->logBytes,
                         zstdRatio(state),
                         wall};
  return row;
}

}  // namespace

std::vector<ClaimCheckBenchRow> runClaimCheckBench(const ClaimCheckBenchOptions& o) {
  std::vector<ClaimCheckBenchRow> rows;
  for (const auto& journal : o.journals) {
    for (const auto& store : o.stores) {
      for (int64_t turns : o.turns) {
        for (const auto& cc : o.claimChecks) rows.push_back(runRow(o, turns, cc, journal, store));
      }
    }
  }
  return rows;
}

namespace {

// The record's table (ADR 0140, "Measured"): turns -> claim-check -> {state KB, log KB}.
const std::map<std::pair<int64_t, std::string>, std::pair<double, double>>& recorded() {
  static const std::map<std::pair<int64_t, std::string>, std::pair<double, double>> m{
      {{50, "off"}, {297.8, 4043}},         {{50, "on"}, {70.8, 953}},
      {{50, "on-no-preview"}, {43.0, 551}}, {{200, "off"}, {1201.4, 60421}},
      {{200, "on"}, {283.4, 13807}},        {{200, "on-no-preview"}, {172.1, 7787}}};
  return m;
}

}  // namespace

std::string formatClaimCheckTable(const std::vector<ClaimCheckBenchRow>& rows) {
  std::string out =
      "| Turns | claim-check | journal | log store | State KB | Log KB | zstd State ratio | wall s "
      "| record State KB | record Log KB |\n|---|---|---|---|---|---|---|---|---|---|\n";
  std::map<std::string, double> offState;
  for (const auto& r : rows) {
    std::string recState = "", recLog = "";
    if (r.journal == "full") {
      auto it = recorded().find({r.turns, r.claimCheck});
      if (it != recorded().end()) {
        recState = fixedDecimals(it->second.first, 1);
        recLog = fixedDecimals(it->second.second, 0);
      }
    }
    out += "| " + std::to_string(r.turns) + " | " + r.claimCheck + " | " + r.journal + " | " +
           r.store + " | " + fixedDecimals(r.stateBytes / 1000.0, 1) + " | " +
           fixedDecimals(r.logBytes / 1000.0, 0) + " | " + fixedDecimals(r.zstdStateRatio, 1) +
           " | " + fixedDecimals(r.wallSeconds, 3) + " | " + recState + " | " + recLog + " |\n";
  }
  out += "\nOn/off state ratios (same journal, store and turns):\n";
  for (const auto& r : rows) {
    if (r.claimCheck != "off") continue;
    for (const auto& on : rows) {
      if (on.claimCheck == "off" || on.turns != r.turns || on.journal != r.journal ||
          on.store != r.store) {
        continue;
      }
      out +=
          "- " + std::to_string(r.turns) + " turns, " + r.journal + ", " + r.store + ", " +
          on.claimCheck + ": state " +
          fixedDecimals(static_cast<double>(r.stateBytes) / static_cast<double>(on.stateBytes), 1) +
          "x smaller, log " +
          fixedDecimals(static_cast<double>(r.logBytes) / static_cast<double>(on.logBytes), 1) +
          "x smaller; log/state " +
          fixedDecimals(static_cast<double>(on.logBytes) / static_cast<double>(on.stateBytes), 2) +
          "\n";
    }
  }
  return out;
}

json::value toJson(const std::vector<ClaimCheckBenchRow>& rows) {
  json::array out;
  for (const auto& r : rows) {
    out.push_back(json::object{{"turns", r.turns},
                               {"claimCheck", r.claimCheck},
                               {"journal", r.journal},
                               {"store", r.store},
                               {"stateBytes", r.stateBytes},
                               {"logBytes", r.logBytes},
                               {"zstdStateRatio", r.zstdStateRatio},
                               {"wallSeconds", r.wallSeconds}});
  }
  return out;
}

}  // namespace loom::claim_check_bench
