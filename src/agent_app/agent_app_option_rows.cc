#include "agent_app/agent_app_option_rows.h"

#include <algorithm>

#include "app/option_row_support.h"
#include "loom/agent_app/agent_app.h"

namespace loom::agent_app {
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
    OptionRow& r = addAgentAppRow(
        rows, "agent.parallelToolCalls", OptionType::kInteger,
        "When one model turn asks for several tool calls, they run concurrently, at most this "
        "many at a time; each is journaled under its own step id, in call order, and a crash "
        "re-runs at most the calls not yet journaled. A call that needs an approval parks "
        "after the calls before it ran. 1: one after another.",
        "4");
    r.min = 1;
    r.max = 64;
    r.set = [](Config& c, const OptionValue& v) {
      agent(c).parallelToolCalls = std::get<int64_t>(v);
    };
    bindAgentValue(r, hasAgent,
                   [](const Config& c) { return agentOrDefault(c).parallelToolCalls; });
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
  addBudgetRows(rows);
}

// model.maxRetries, model.initialBackoffMillis, model.maxBackoffMillis.
template <typename Row>
void addRetryRows(Row& openAiRow) {
  struct Field {
    const char* key;
    int64_t ModelSection::*member;
    const char* description;
    const char* dflt;
    double min;
  };
  static const Field kFields[] = {
      {"maxRetries", &ModelSection::maxRetries,
       "Retries after the first attempt of a turn (429, 408, 5xx, refused or broken "
       "connections); then the turn fails unavailable.",
       "4", 0},
      {"initialBackoffMillis", &ModelSection::initialBackoffMillis,
       "The first wait before a retry, in milliseconds; it doubles per retry (a server's "
       "`Retry-After` wins).",
       "500", 0},
      {"maxBackoffMillis", &ModelSection::maxBackoffMillis,
       "The cap of one wait; a server asking for longer ends the retries.", "30000", 0},
  };
  for (const Field& f : kFields) {
    OptionRow& r = openAiRow(f.key, OptionType::kInteger, f.description, f.dflt);
    r.min = f.min;
    r.max = f.member == &ModelSection::maxRetries ? 100 : 86'400'000;
    auto member = f.member;
    r.set = [member](Config& c, const OptionValue& v) { model(c).*member = std::get<int64_t>(v); };
    bindAgentValue(r, hasOpenAiModel,
                   [member](const Config& c) { return modelOrDefault(c).*member; });
  }
}

// Header names only: a value may be a credential.
std::string headerNames(const json::object& headers) {
  std::string out = "{";
  for (const auto& kv : headers) {
    if (out.size() > 1) out += ", ";
    out += std::string(kv.key()) + " = <set>";
  }
  return out + "}";
}

// model.headers, model.extraBody.
template <typename Row>
void addRequestRows(Row& openAiRow) {
  {
    OptionRow& r = openAiRow("headers", OptionType::kInlineTable,
                             "Extra request headers: `{ \"OpenAI-Organization\" = \"org-1\" }`; "
                             "a value written `\"${NAME}\"` is read from the environment "
                             "variable NAME, which tools then do not inherit. `config check` "
                             "shows the names only.",
                             "{}");
    r.set = [](Config& c, const OptionValue& v) {
      model(c).headers = json::parse(std::get<std::string>(v), "model.headers").as_object();
    };
    r.show = [](const Config& c) {
      return hasOpenAiModel(c) ? headerNames(c.model->headers) : std::string();
    };
  }
  {
    OptionRow& r = openAiRow("extraBody", OptionType::kInlineTable,
                             "Merged into every request body: `{ temperature = 0.2, max_tokens "
                             "= 512, seed = 7 }`. It cannot set `model`, `messages`, `tools` or "
                             "`tool_choice`, which Loom writes.",
                             "{}");
    r.set = [](Config& c, const OptionValue& v) {
      model(c).extraBody = json::parse(std::get<std::string>(v), "model.extraBody").as_object();
    };
    r.show = [](const Config& c) {
      return hasOpenAiModel(c) ? json::toText(c.model->extraBody) : std::string();
    };
  }
}

// A header name is an HTTP token; neither it nor its value may hold a line break (a header
// injected into the request).
bool isHeaderToken(std::string_view name) {
  static constexpr std::string_view kSpecial = "!#$%&'*+-.^_`|~";
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           kSpecial.find(ch) != std::string_view::npos;
  });
}

void checkRequestOptions(const ModelSection& m, ConfigIssues& issues) {
  for (const auto& kv : m.headers) {
    std::string path = "model.headers." + std::string(kv.key());
    if (!isHeaderToken(kv.key())) {
      issues.push_back({path,
                        "not a header name; use letters, digits and - (e.g. "
                        "\"OpenAI-Organization\")"});
    } else if (!kv.value().is_string() ||
               kv.value().get_string().find_first_of("\r\n") != std::string_view::npos) {
      issues.push_back({path, "expected a string on one line"});
    } else if (kv.key() == "Authorization" && !m.apiKeyEnv.empty()) {
      issues.push_back({path,
                        "the API key of model.apiKeyEnv is sent as Authorization; set "
                        "apiKeyEnv = \"\" to send this header instead"});
    }
  }
  for (std::string_view reserved : {"model", "messages", "tools", "tool_choice"}) {
    if (m.extraBody.contains(reserved)) {
      issues.push_back({"model.extraBody." + std::string(reserved),
                        "Loom writes this member of the body; remove it (the model name is "
                        "model.model)"});
    }
  }
  if (m.maxBackoffMillis < m.initialBackoffMillis) {
    issues.push_back({"model.maxBackoffMillis", "must be at least model.initialBackoffMillis"});
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
  addRetryRows(openAiRow);
  addRequestRows(openAiRow);
}

}  // namespace

OptionRow& addAgentAppRow(std::vector<OptionRow>& rows, std::string path, OptionType type,
                          std::string description, std::string defaultText) {
  return addOptionRow(rows, std::move(path), type, std::move(description), std::move(defaultText));
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
      checkRequestOptions(*m, issues);
    }
  }
  validateTools(config, issues);
}

void registerAgentAppSections() {
  addOptionSection({"agent app", addAgentAppRows, validateAgentApp});
}

}  // namespace loom::agent_app
