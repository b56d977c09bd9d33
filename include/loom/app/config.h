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
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loom/effects/middleware.h"
#include "loom/middleware/config_issue.h"
#include "loom/middleware/redaction_config.h"
#include "loom/util/error.h"

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
  // execution.claimCheck (ADR 0140) is added here by the claim-check work.
};

struct SecurityConfig {
  std::vector<middleware::RedactionRule> redact;
  // security.crypto and security.keys are added by the compliance work.
};

// A placeholder group: compliance.erase is added by the compliance work.
struct ComplianceConfig {};

struct EventStoreConfig {
  std::string kind = "sqlite";      // "sqlite" (<home>/loom.db) or "memory"
  std::string durability = "full";  // "full" or "normal" (SQLite only)
};

struct StorageConfig {
  std::string home = ".loom";  // the folder of loom.db (and later the content store)
  EventStoreConfig eventStore;
  // storage.contentStore and storage.retention are added by later work.
};

struct ObservabilityConfig {
  // Receives warnings (report-only). Empty: "loom: warning: ..." on stderr. Must be
  // thread-safe. C++ only (a loom.toml cannot hold a function).
  std::function<void(std::string_view)> onWarn;
  std::string logLevel = "info";  // "error", "warn", "info" or "debug"
};

struct Config {
  ExecutionConfig execution;
  SecurityConfig security;
  ComplianceConfig compliance;
  StorageConfig storage;
  ObservabilityConfig observability;
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
// (environment variables named by security.redact are read at boot).
ConfigIssues validateConfig(const Config& config);

// Validates `config` and freezes it. Throws ConfigValidationError listing every problem.
std::shared_ptr<const Config> defineConfig(Config config);

}  // namespace loom::app
