// The application's configuration (DESIGN §1 "defineConfig, grouped options"): options live
// in groups — execution, security, compliance, storage, observability — as the fields of
// loom::app::Config below, and in loom.toml as tables of the same names (config_file.h).
// defineConfig validates a Config and freezes it; boot (app.h) composes the app from the
// frozen value. Validation reports EVERY problem at once, each naming its full option path
// (storage.eventStore.durability) and what is expected. Every option, its default and its
// allowed values are listed in one table (options.h), which also generates docs/config.md.
// A grouped option cannot be written flat here: Config has no top-level claimCheck or
// effectMiddleware, so that spelling does not compile (loom.toml refuses it with an error
// naming the grouped path). Thread-safety: a frozen Config is immutable and shareable.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loom/compliance/master_key.h"
#include "loom/content/content_store.h"
#include "loom/effects/middleware.h"
#include "loom/json/json.h"
#include "loom/kernel/usage.h"
#include "loom/middleware/claim_check/claim_check_config.h"
#include "loom/middleware/config_issue.h"
#include "loom/middleware/redaction_config.h"
#include "loom/util/error.h"
#include "loom/workflow/retry_policy.h"

namespace loom::app {

using middleware::ConfigIssue;
using middleware::ConfigIssues;

struct JournalConfig {
  // How agent model turns journal their input: "delta" (since + appended) or "full".
  std::string modelInput = "delta";
};

struct ExecutionConfig {
  // User middleware, outermost first; they run inside the kill switch and redaction.
  std::vector<std::shared_ptr<effects::Middleware>> effectMiddleware;
  JournalConfig journal;
  // execution.claimCheck (ADR 0140): unset adds no middleware and changes nothing.
  std::optional<middleware::ClaimCheckConfig> claimCheck;
  // execution.retry: durable retries of retryable effect failures (docs/operations.md).
  workflow::DurableRetry retry;
  // execution.leaseTtlMs: how long a run's lease holds without a heartbeat.
  int64_t leaseTtlMillis = 15'000;
  // execution.snapshotEveryEvents: snapshots of replay state when a run parks and every this
  // many events (0 = none written); see workflow::RuntimeOptions::snapshotEveryEvents.
  int64_t snapshotEveryEvents = 1000;
  // execution.codeVersion: the code version this program declares (workflow/code_version.h);
  // empty: an agent app's file digest, else the program's build id.
  std::string codeVersion;
  // execution.versioning: "pinned" (a run continues only on its own code version) or
  // "latest" (on the code at hand, its replay checked; workflow::Versioning).
  std::string versioning = "pinned";
};

struct SecurityConfig {
  std::vector<middleware::RedactionRule> redact;
  // security.keys: where the master key that wraps the per-subject data keys comes from (a
  // file or an environment variable; never stored beside the data). Required by
  // compliance.erase and security.crypto.
  std::optional<compliance::KeysConfig> keys;
  // security.crypto: encryption at rest for everything, executions without a subject too
  // (under a system key). With execution.claimCheck, the content store must seal its blobs.
  bool crypto = false;
};

struct ComplianceConfig {
  // compliance.erase: the logs of executions with a subject are sealed under that subject's
  // key, so `loom erase <subject>` can crypto-shred them and delete their blobs.
  bool erase = false;
};

struct EventStoreConfig {
  std::string kind = "sqlite";      // "sqlite" (<home>/loom.db) or "memory"
  std::string durability = "full";  // "full" or "normal" (SQLite only)
};

struct ContentStoreConfig {
  // "filesystem" (<home>/blobs), "sqlite" (<home>/content.db) or "memory".
  std::string kind = "filesystem";
  std::string path;  // overrides the default location under the home
  // With the filesystem store in the home (<home>/blobs): blobs smaller than this are rows of
  // <home>/loom.db, their put flushed by the citing event's commit (PackedContentStore, ADR
  // 0014). 0 writes every new blob as a file.
  int64_t packBelowBytes = 1 << 20;
  // Seal each blob under its subject's key (EncryptingContentStore, ADR 0143); needs
  // security.keys. Required for execution.claimCheck with security.crypto.
  bool sealed = false;
  // More than one home uses this store on purpose (docs/operations.md): a home that finds it
  // used by another deletes from it only when this is set, and the sweep and erasure then
  // spare whatever any of those homes cites.
  bool shared = false;
  // C++ only: use this store (the same object you hand sweepUnpinnedContent).
  std::shared_ptr<content::ContentStore> instance;
};

struct RetentionConfig {
  int64_t afterDays = 30;  // ended executions older than this are discarded
  bool archive = true;     // write them to an archive segment first (ADR 0138)
};

struct StorageConfig {
  std::string home = ".loom";  // the folder of loom.db, the blobs and the archive
  // A PostgreSQL server (libpq URL or connection string): every store (logs, control log,
  // leases, snapshots, blobs, keys, kill switch, blob ledger, home record) lives in `schema`
  // there, shared by workers on many machines; home keeps only the archive and local files.
  // Empty (the default): the embedded home. The password never appears in a message.
  std::string url;
  std::string schema = "loom";  // the PostgreSQL schema of Loom's tables (with url)
  EventStoreConfig eventStore;
  ContentStoreConfig contentStore;  // the "default" content store
  std::optional<RetentionConfig> retention;  // unset: `loom retention run` refuses
};

struct ObservabilityConfig {
  // Receives warnings (report-only). Empty: "loom: warning: ..." on stderr. Must be
  // thread-safe. C++ only (a loom.toml cannot hold a function).
  std::function<void(std::string_view)> onWarn;
  // observability.prices: USD per million tokens, by model id ("openai:gpt-4o", "scripted");
  // a model step's cost is recorded at its model's price (docs/observability.md).
  std::map<std::string, kernel::ModelPrice> prices;
};

// An agent app (`loom run app.toml`, examples/agents/): the [agent], [model] and [[tools]]
// sections of a loom.toml. Unset: the file defines no agent. Relative paths (model.script,
// a tool's command) are kept as written; the agent app loader (loom/agent_app/agent_app.h)
// resolves them against the file's folder and builds the model, the tools and the agent
// workflow from these sections. boot() itself ignores them.
struct AgentCompactionSection {
  int64_t triggerBytes = 0;   // compact when the transcript passes this many bytes
  int64_t keepLastTurns = 2;  // turns kept verbatim after the summary
  std::string model;          // model id for the summary; empty: the app's model
};

// [agent.budget] (docs/observability.md, "Budgets"): each limit optional.
struct AgentBudgetSection {
  std::optional<int64_t> maxTokens;
  std::optional<double> maxCostUsd;
  std::optional<int64_t> maxToolCalls;
  std::string onExceeded = "park";  // or "fail"
};

struct AgentSection {
  std::string name;    // the agent loop's name, also the name of its workflow
  std::string prompt;  // the prompt of a run given none
  std::string system;  // the system prompt; empty: none
  int64_t maxTurns = 50;
  int64_t parallelToolCalls = 4;    // tool calls of one turn run at once, at most this many
  int64_t warnTranscriptBytes = 0;  // 0: no state-growth warning
  std::optional<AgentCompactionSection> compaction;
  std::optional<AgentBudgetSection> budget;
};

struct ModelSection {
  std::string kind = "scripted";  // "scripted" or "openai"
  std::string script;             // scripted: the script file (JSON or TOML)
  std::string baseUrl;            // openai: the API root
  std::string model;              // openai: the model name the server knows
  std::string apiKeyEnv = "OPENAI_API_KEY";  // openai: the variable holding the key
  int64_t timeoutMillis = 120'000;           // openai: per request
  int64_t maxRetries = 4;                    // openai: retries after the first attempt
  int64_t initialBackoffMillis = 500;        // openai: the first backoff; doubles per retry
  int64_t maxBackoffMillis = 30'000;         // openai: the cap of one backoff
  // openai: extra request headers; a value written "${NAME}" is read from the variable NAME
  // (which is then kept from tools, as a secret).
  json::object headers;
  json::object extraBody;  // openai: merged into every request body (temperature, ...)
};

struct ToolSection {
  std::string name;  // also the effect id
  std::string description;
  std::vector<std::string> command;  // argv; JSON arguments on stdin, JSON result on stdout
  int64_t timeoutMillis = 30'000;
  bool untrusted = false;         // results are recorded tainted ("tool:<name>")
  bool requiresApproval = false;  // the run parks before each call until a person approves
  int64_t approvalTimeoutMillis = 0;       // tools[].approvalTimeout ("24h"); 0: wait for ever
  std::string onApprovalTimeout = "deny";  // "deny", "approve" or "fail"
  bool returnsMedia = false;
  json::value inputSchema;  // JSON Schema of the arguments; null: any object
  // Its environment: the parent's less every secret variable (child_environment.h), or with
  // inheritEnv = false only PATH, HOME, LANG, ...; env is set on top.
  std::vector<std::pair<std::string, std::string>> env;
  bool inheritEnv = true;
};

struct McpServerSection {  // [[tools.mcp]]
  std::string name;
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  bool inheritEnv = true;          // as ToolSection::inheritEnv
  std::string workingDirectory;    // relative to the app file's folder; empty: that folder
  int64_t timeoutMillis = 30'000;  // per request (handshake, list page, call)
};

struct Config {
  ExecutionConfig execution;
  SecurityConfig security;
  ComplianceConfig compliance;
  StorageConfig storage;
  ObservabilityConfig observability;
  // Agent app sections (above); empty in an app that defines no agent.
  std::optional<AgentSection> agent;
  std::optional<ModelSection> model;
  std::vector<ToolSection> tools;
  std::vector<McpServerSection> mcpServers;
};

// The ConfigError of a config that failed validation: what() lists every problem on its own
// line ("  path: message"), issues() gives them as values.
class ConfigValidationError : public ConfigError {
 public:
  ConfigValidationError(std::string origin, ConfigIssues issues);
  const ConfigIssues& issues() const { return issues_; }
  const std::string& origin() const { return origin_; }

 private:
  std::string origin_;
  ConfigIssues issues_;
};

// Every problem of `config` (empty when it is valid). Pure: opens, creates and reads nothing
// (environment variables named by security.redact are read at boot). With the app's tasks
// (boot passes its registry; `loom config check` the one it builds for an agent app) it also
// runs what only they can tell: execution.claimCheck.toolIds must name registered tasks, and
// no model. The one home of the checks boot runs.
ConfigIssues validateConfig(const Config& config, const middleware::KnownTasks& tasks = {});

// The capabilities of the store execution.claimCheck would offload to, decided from the
// config alone (the D8 boot rules need them before anything is opened).
content::ContentCapabilities claimCheckStoreCapabilities(const Config& config);

// Validates `config` and freezes it. Throws ConfigValidationError listing every problem.
std::shared_ptr<const Config> defineConfig(Config config);

// Registers every environment variable `config` reads a secret from (security.keys.env,
// model.apiKeyEnv, security.redact[].env) with markSecretVariable, so no tool or MCP server
// Loom starts afterwards inherits it (util/child_environment.h). Boot and agent-app
// registration call it before anything is started.
void markSecretVariables(const Config& config);

// The variable NAME of a value written "${NAME}" (model.baseUrl, model.model, model.headers
// values read it from the environment); nullopt for any other value.
std::optional<std::string> environmentReference(std::string_view value);

}  // namespace loom::app
