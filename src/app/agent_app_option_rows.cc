#include "agent_app_option_rows.h"

#include <algorithm>

namespace loom::app {
namespace {

constexpr double kMaxBytes = 1099511627776.0;  // 1 TiB: "no limit" in practice
constexpr double kMaxTurns = 99999;
constexpr std::size_t kMaxNameChars = 64;

AgentSection& agent(Config& c) { return c.agent ? *c.agent : c.agent.emplace(); }
ModelSection& model(Config& c) { return c.model ? *c.model : c.model.emplace(); }
AgentCompactionSection& compaction(Config& c) {
  AgentSection& a = agent(c);
  return a.compaction ? *a.compaction : a.compaction.emplace();
}

// A section's value, or its default when the section is unset (what validation checks).
const AgentSection& agentOrDefault(const Config& c) {
  static const AgentSection kDefault;
  return c.agent ? *c.agent : kDefault;
}
const ModelSection& modelOrDefault(const Config& c) {
  static const ModelSection kDefault;
  return c.model ? *c.model : kDefault;
}
const AgentCompactionSection& compactionOrDefault(const Config& c) {
  static const AgentCompactionSection kDefault;
  const AgentSection& a = agentOrDefault(c);
  return a.compaction ? *a.compaction : kDefault;
}

// describeConfig skips an empty text: a file without an agent shows none of its options.
template <typename Get>
void bindAgentValue(OptionRow& r, bool present(const Config&), Get get) {
  r.get = [get](const Config& c) { return OptionValue(get(c)); };
  r.show = [present, get](const Config& c) {
    return present(c) ? optionValueText(OptionValue(get(c))) : std::string();
  };
}

bool hasAgent(const Config& c) { return c.agent.has_value(); }
bool hasModel(const Config& c) { return c.model.has_value(); }
bool hasOpenAiModel(const Config& c) { return c.model && c.model->kind == "openai"; }
bool hasCompaction(const Config& c) { return c.agent && c.agent->compaction; }

bool isNameChar(char ch, bool dotAllowed) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '-' || (dotAllowed && ch == '.');
}

void addAgentRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r =
        addAgentAppRow(rows, "agent", OptionType::kTable,
                       "An agent app's loop (`loom run app.toml`; see examples/agents/). A "
                       "file with `[agent]` defines one durable tool-calling agent; it also "
                       "needs `[model]`, and may have `[[tools]]` and any config group.");
    r.set = [](Config& c, const OptionValue&) { agent(c); };
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "agent.name", OptionType::kString,
                       "The agent loop's name: its steps are `<name>#turn:<i>:model` and "
                       "`<name>#turn:<i>:tool:<j>`, and its runs' workflow is named after "
                       "it. 1 to 64 of A-Z a-z 0-9 _ . -");
    r.required = true;  // checked by validateAgentApp when [agent] is present
    r.set = [](Config& c, const OptionValue& v) { agent(c).name = std::get<std::string>(v); };
    r.show = [](const Config& c) {
      return c.agent ? optionValueText(c.agent->name) : std::string();
    };
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "agent.prompt", OptionType::kString,
                       "The prompt of a run given neither `--prompt` nor `--input`.", "\"\"");
    r.set = [](Config& c, const OptionValue& v) { agent(c).prompt = std::get<std::string>(v); };
    bindAgentValue(r, hasAgent, [](const Config& c) { return agentOrDefault(c).prompt; });
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "agent.system", OptionType::kString,
                       "The system prompt, the transcript's first message; empty: none.", "\"\"");
    r.set = [](Config& c, const OptionValue& v) { agent(c).system = std::get<std::string>(v); };
    bindAgentValue(r, hasAgent, [](const Config& c) { return agentOrDefault(c).system; });
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "agent.maxTurns", OptionType::kInteger,
                       "After this many model turns the run ends with outcome `maxTurns` "
                       "(a result, not a failure).",
                       "50");
    r.min = 1;
    r.max = kMaxTurns;
    r.set = [](Config& c, const OptionValue& v) { agent(c).maxTurns = std::get<int64_t>(v); };
    bindAgentValue(r, hasAgent, [](const Config& c) { return agentOrDefault(c).maxTurns; });
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "agent.warnTranscriptBytes", OptionType::kInteger,
                       "The state-growth warning (ADR 0137): once per run, when the "
                       "transcript passes this many bytes, a report-only warning goes to "
                       "observability.onWarn (stderr: `loom: warning: ...`) naming "
                       "compaction and execution.claimCheck. 0: off.",
                       "0");
    r.min = 0;
    r.max = kMaxBytes;
    r.set = [](Config& c, const OptionValue& v) {
      agent(c).warnTranscriptBytes = std::get<int64_t>(v);
    };
    bindAgentValue(r, hasAgent,
                   [](const Config& c) { return agentOrDefault(c).warnTranscriptBytes; });
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "agent.compaction", OptionType::kTable,
                       "Compaction (ADR 0137): when the transcript passes `triggerBytes`, an "
                       "`llm` step `<name>#turn:<i>:compact` asks the model for a summary "
                       "that replaces the older messages. Unset: the transcript only grows.");
    r.set = [](Config& c, const OptionValue&) { compaction(c); };
  }
  {
    OptionRow& r = addAgentAppRow(rows, "agent.compaction.triggerBytes", OptionType::kInteger,
                                  "Compact when the transcript passes this many bytes.");
    r.required = true;  // checked by validateAgentApp when [agent.compaction] is present
    r.min = 1;
    r.max = kMaxBytes;
    r.set = [](Config& c, const OptionValue& v) {
      compaction(c).triggerBytes = std::get<int64_t>(v);
    };
    r.show = [](const Config& c) {
      return hasCompaction(c) ? optionValueText(compactionOrDefault(c).triggerBytes)
                              : std::string();
    };
  }
  {
    OptionRow& r = addAgentAppRow(rows, "agent.compaction.keepLastTurns", OptionType::kInteger,
                                  "Turns kept verbatim after the summary.", "2");
    r.min = 0;
    r.max = kMaxTurns;
    r.set = [](Config& c, const OptionValue& v) {
      compaction(c).keepLastTurns = std::get<int64_t>(v);
    };
    bindAgentValue(r, hasCompaction,
                   [](const Config& c) { return compactionOrDefault(c).keepLastTurns; });
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "agent.compaction.model", OptionType::kString,
                       "The model that writes the summary, by id; empty: the app's model "
                       "(the only one an app file defines).",
                       "\"\"");
    r.set = [](Config& c, const OptionValue& v) { compaction(c).model = std::get<std::string>(v); };
    bindAgentValue(r, hasCompaction, [](const Config& c) { return compactionOrDefault(c).model; });
  }
}

void addModelRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r = addAgentAppRow(rows, "model", OptionType::kTable,
                                  "An agent app's model; its turns run as `llm` effects under the "
                                  "model's id (`scripted`, `openai:<model>`).");
    r.set = [](Config& c, const OptionValue&) { model(c); };
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "model.kind", OptionType::kString,
                       "`scripted`: a deterministic model driven by a script file (demos, "
                       "tests, benchmarks); `openai`: an OpenAI-compatible HTTP server.",
                       "\"scripted\"");
    r.allowed = {"scripted", "openai"};
    r.set = [](Config& c, const OptionValue& v) { model(c).kind = std::get<std::string>(v); };
    bindAgentValue(r, hasModel, [](const Config& c) { return modelOrDefault(c).kind; });
  }
  {
    OptionRow& r =
        addAgentAppRow(rows, "model.script", OptionType::kString,
                       "(kind `scripted`) The script, a .json or .toml file relative to the "
                       "app file: explicit `turns` and/or a `generate` form (see "
                       "include/loom/providers/scripted_model.h). Required for `scripted`.");
    r.set = [](Config& c, const OptionValue& v) { model(c).script = std::get<std::string>(v); };
    bindAgentValue(r, hasModel, [](const Config& c) { return modelOrDefault(c).script; });
  }
  auto openAiRow = [&rows](std::string key, OptionType type, std::string description,
                           std::string dflt) -> OptionRow& {
    OptionRow& r = addAgentAppRow(rows, "model." + key, type, "(kind `openai`) " + description,
                                  std::move(dflt));
    if (!kOpenAiModelWired) {
      r.support = Support::kNotYet;
      r.arrivesWith = "the OpenAI-compatible model work";
    }
    return r;
  };
  {
    OptionRow& r = openAiRow("baseUrl", OptionType::kString,
                             "The API root, e.g. `https://api.openai.com/v1` or "
                             "`http://127.0.0.1:8080/v1`; `\"${NAME}\"` reads it from the "
                             "environment variable NAME. Required for `openai`.",
                             "");
    r.set = [](Config& c, const OptionValue& v) { model(c).baseUrl = std::get<std::string>(v); };
    bindAgentValue(r, hasOpenAiModel, [](const Config& c) { return modelOrDefault(c).baseUrl; });
  }
  {
    OptionRow& r =
        openAiRow("model", OptionType::kString,
                  "The model name the server knows (`\"${NAME}\"`: from the environment). "
                  "Required for `openai`.",
                  "");
    r.set = [](Config& c, const OptionValue& v) { model(c).model = std::get<std::string>(v); };
    bindAgentValue(r, hasOpenAiModel, [](const Config& c) { return modelOrDefault(c).model; });
  }
  {
    OptionRow& r = openAiRow("apiKeyEnv", OptionType::kString,
                             "The environment variable that holds the API key (read at start; "
                             "never journaled); empty: send no key.",
                             "\"OPENAI_API_KEY\"");
    r.set = [](Config& c, const OptionValue& v) { model(c).apiKeyEnv = std::get<std::string>(v); };
    bindAgentValue(r, hasOpenAiModel, [](const Config& c) { return modelOrDefault(c).apiKeyEnv; });
  }
  {
    OptionRow& r = openAiRow("timeoutMillis", OptionType::kInteger,
                             "How long one request may take, in milliseconds.", "120000");
    r.min = 1;
    r.max = 86'400'000;
    r.set = [](Config& c, const OptionValue& v) { model(c).timeoutMillis = std::get<int64_t>(v); };
    bindAgentValue(r, hasOpenAiModel,
                   [](const Config& c) { return modelOrDefault(c).timeoutMillis; });
  }
}

}  // namespace

OptionRow& addAgentAppRow(std::vector<OptionRow>& rows, std::string path, OptionType type,
                          std::string description, std::string defaultText) {
  OptionRow& r = rows.emplace_back();
  r.path = std::move(path);
  r.type = type;
  r.description = std::move(description);
  r.defaultText = std::move(defaultText);
  return r;
}

// What is wrong with a name ("" when nothing): agent names may hold dots, tool names not
// (a tool name is also a function name in a model's API).
std::string agentAppNameProblem(const std::string& name, bool dotAllowed) {
  if (name.empty()) return "missing; give it a name";
  bool ok = name.size() <= kMaxNameChars && std::all_of(name.begin(), name.end(), [&](char ch) {
              return isNameChar(ch, dotAllowed);
            });
  if (ok) return "";
  return "\"" + name + "\" is not a valid name; use 1 to 64 of A-Z a-z 0-9 _ -" +
         (dotAllowed ? " ." : "");
}

void addAgentAppRows(std::vector<OptionRow>& rows) {
  addAgentRows(rows);
  addModelRows(rows);
  addToolRows(rows);
}

void validateAgentApp(const Config& config, ConfigIssues& issues) {
  bool anySection =
      config.agent || config.model || !config.tools.empty() || !config.mcpServers.empty();
  if (!anySection) return;
  if (!config.agent) {
    issues.push_back({"agent",
                      "missing: [model] and [[tools]] belong to an agent app, which needs an "
                      "[agent] table with a name"});
  } else {
    if (std::string p = agentAppNameProblem(config.agent->name, true); !p.empty()) {
      issues.push_back({"agent.name", p});
    }
    if (config.agent->compaction && config.agent->compaction->triggerBytes < 1) {
      issues.push_back({"agent.compaction.triggerBytes",
                        "missing; [agent.compaction] needs triggerBytes = <bytes>"});
    }
    if (!config.model) {
      issues.push_back({"model",
                        "missing: an agent needs a [model] table, e.g. kind = \"scripted\" "
                        "and script = \"scripts/agent.json\""});
    }
  }
  if (const auto& m = config.model) {
    if (m->kind == "scripted" && m->script.empty()) {
      issues.push_back({"model.script",
                        "missing; kind = \"scripted\" needs script = \"<file>.json\" (or "
                        ".toml), relative to the app file"});
    }
    if (m->kind == "openai" && !kOpenAiModelWired) {
      issues.push_back({"model.kind",
                        "\"openai\" is not supported by this build yet (it arrives with the "
                        "OpenAI-compatible model work); use kind = \"scripted\""});
    } else if (m->kind == "openai") {
      if (m->baseUrl.empty())
        issues.push_back({"model.baseUrl",
                          "missing; kind = \"openai\" "
                          "needs the API root"});
      if (m->model.empty())
        issues.push_back({"model.model",
                          "missing; kind = \"openai\" needs "
                          "the model name"});
    }
  }
  validateTools(config, issues);
}

}  // namespace loom::app
