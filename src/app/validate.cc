#include <algorithm>

#include "app/options.h"
#include "app/run_ownership_option_rows.h"
#include "compliance/boot_rules.h"
#include "loom/app/config.h"
#include "loom/middleware/claim_check/claim_check_config.h"
#include "loom/middleware/kill_switch_config.h"
#include "loom/middleware/timeout.h"
#include "postgres/pg_connection.h"

namespace loom::app {
namespace {

std::string validationMessage(const std::string& origin, const ConfigIssues& issues) {
  std::string out = "invalid configuration (" + origin + "): " + std::to_string(issues.size()) +
                    (issues.size() == 1 ? " problem" : " problems") +
                    "; nothing was opened or created. Fix each one:";
  for (const auto& issue : issues) {
    out += "\n  ";
    out += issue.path.empty() ? issue.message : issue.path + ": " + issue.message;
  }
  return out;
}

// The names the built-in layers use; a user middleware may not take one, so a chain's
// layerNames() and find() stay unambiguous.
constexpr std::string_view kReservedNames[] = {
    middleware::kKillSwitchName, middleware::kClaimCheckName, middleware::kRedactionName};

// How to rename a middleware whose name is reserved, when it has a way.
std::string renameHint(const effects::Middleware& m) {
  if (dynamic_cast<const middleware::ClaimCheckMiddleware*>(&m) == nullptr &&
      dynamic_cast<const middleware::AppStoreClaimCheck*>(&m) == nullptr) {
    return "";
  }
  return " with ClaimCheckOptions.name (the sentinel preset, plugins::sentinelMiddleware, is "
         "named \"sentinel\"; for agent tools use execution.claimCheck instead)";
}

void validateEffectMiddleware(const Config& config, ConfigIssues& issues) {
  const auto& list = config.execution.effectMiddleware;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string path = "execution.effectMiddleware[" + std::to_string(i) + "]";
    if (!list[i]) {
      issues.push_back({path, "expected a middleware, got a null pointer"});
      continue;
    }
    std::string_view name = list[i]->name();
    if (name.empty()) issues.push_back({path, "expected a middleware with a non-empty name()"});
    for (std::string_view reserved : kReservedNames) {
      if (name == reserved) {
        issues.push_back({path, "the name \"" + std::string(name) +
                                    "\" belongs to a built-in layer; rename this middleware" +
                                    renameHint(*list[i])});
      }
    }
    if (dynamic_cast<const middleware::AppStoreClaimCheck*>(list[i].get()) &&
        config.security.crypto && !config.storage.contentStore.sealed) {
      issues.push_back({path,
                        "with security.crypto this claim-check would keep tool results in "
                        "plaintext blobs outside the subjects' keys (ADR 0140 D8); set "
                        "storage.contentStore.sealed = true"});
    }
    if (dynamic_cast<const middleware::TimeoutMiddleware*>(list[i].get()) && i + 1 != list.size()) {
      issues.push_back({path,
                        "a timeout must be the last (innermost) entry: a timed-out call "
                        "keeps running and must not re-enter the middleware after it; "
                        "move it to the end"});
    }
  }
}

// execution.codeVersion: a short printable name, shown in messages and `loom state`.
void validateCodeVersion(const std::string& version, ConfigIssues& issues) {
  bool printable = std::all_of(version.begin(), version.end(), [](char ch) {
    auto u = static_cast<unsigned char>(ch);
    return u >= 0x20 && u != 0x7f;
  });
  if (version.size() > 128 || !printable) {
    issues.push_back({"execution.codeVersion",
                      "expected up to 128 printable characters (no control characters), got " +
                          std::to_string(version.size()) + " bytes; declare a short name such "
                          "as a release tag or a commit id"});
  }
}

// security.keys, security.crypto, compliance.erase and the D8 boot rules: all decided from
// the config alone, before anything is opened.
void validateCompliance(const Config& c, ConfigIssues& issues) {
  bool needsKeys = c.compliance.erase || c.security.crypto || c.storage.contentStore.sealed;
  if (needsKeys && !c.security.keys) {
    issues.push_back({"security.keys",
                      "required when compliance.erase, security.crypto or "
                      "storage.contentStore.sealed is on: name a file or an environment "
                      "variable that holds the master key (`loom keys new-master` prints one)"});
  }
  if (c.security.keys && c.security.keys->file.has_value() == c.security.keys->env.has_value()) {
    issues.push_back({"security.keys", "give exactly one of file and env"});
  }
  content::ContentCapabilities caps = claimCheckStoreCapabilities(c);
  ConfigIssues rules = compliance::checkCryptoRules(c.security.crypto, c.compliance.erase,
                                                    c.execution.claimCheck.has_value(), caps);
  issues.insert(issues.end(), rules.begin(), rules.end());
  if (c.compliance.erase && !c.execution.claimCheck && !caps.remove) {
    issues.push_back({"compliance.erase",
                      "needs a content store that can delete blobs (the filesystem, SQLite "
                      "or memory store), so erasure can reach a subject's blobs"});
  }
}

// storage.url moves every store to one PostgreSQL schema: a store the config keeps elsewhere
// would be one machine's, which the workers on the others could neither read nor sweep.
void validateStorage(const StorageConfig& s, ConfigIssues& issues) {
  if (s.url.empty() && s.contentStore.kind != "filesystem" &&
      s.contentStore.packBelowBytes != ContentStoreConfig{}.packBelowBytes) {
    issues.push_back({"storage.contentStore.packBelowBytes",
                      "only the filesystem store in the home packs small blobs (into loom.db); "
                      "remove it, or set storage.contentStore.kind = \"filesystem\""});
  }
  if (s.url.empty()) return;
  if (auto problem = postgres::urlProblem(s.url)) issues.push_back({"storage.url", *problem});
  try {
    postgres::requireIdentifier(s.schema);
  } catch (const ConfigError& e) {
    issues.push_back({"storage.schema", e.what()});
  }
  if (s.eventStore.kind != "sqlite") {
    issues.push_back({"storage.eventStore.kind",
                      "with storage.url the execution logs are on PostgreSQL; remove "
                      "storage.eventStore.kind (or storage.url)"});
  }
  const ContentStoreConfig& c = s.contentStore;
  if (!c.instance && (c.kind != "filesystem" || !c.path.empty() ||
                      c.packBelowBytes != ContentStoreConfig{}.packBelowBytes)) {
    issues.push_back({"storage.contentStore",
                      "with storage.url the content store is PostgreSQL's (table blobs), which "
                      "every worker reads; remove storage.contentStore.kind, .path and "
                      ".packBelowBytes (keep .sealed)"});
  }
}

}  // namespace

content::ContentCapabilities claimCheckStoreCapabilities(const Config& c) {
  const ContentStoreConfig& store = c.storage.contentStore;
  std::shared_ptr<content::ContentStore> explicitStore =
      c.execution.claimCheck && c.execution.claimCheck->store ? c.execution.claimCheck->store
                                                              : store.instance;
  content::ContentCapabilities caps;
  if (explicitStore) {
    caps = explicitStore->capabilities();
  } else {
    caps.remove = caps.deleteIfUntouchedSince = caps.touchClock = caps.enumerate = true;
  }
  // The default store is wrapped in an EncryptingContentStore when sealed.
  if (store.sealed && !(c.execution.claimCheck && c.execution.claimCheck->store)) {
    caps.sealsContent = true;
  }
  return caps;
}

ConfigValidationError::ConfigValidationError(std::string origin, ConfigIssues issues)
    : ConfigError(validationMessage(origin, issues)),
      origin_(std::move(origin)),
      issues_(std::move(issues)) {}

ConfigIssues validateConfig(const Config& config, const middleware::KnownTasks& tasks) {
  ConfigIssues issues;
  for (const OptionRow& row : optionTable()) {
    if (!row.get) continue;
    if (auto problem = checkOptionValue(row, row.get(config))) {
      issues.push_back({row.path, *problem});
    }
  }
  validateEffectMiddleware(config, issues);
  validateCodeVersion(config.execution.codeVersion, issues);
  ConfigIssues redact =
      middleware::validateRedactionRules(config.security.redact, "security.redact");
  issues.insert(issues.end(), redact.begin(), redact.end());
  if (config.execution.claimCheck) {
    ConfigIssues cc = middleware::validateClaimCheckConfig(*config.execution.claimCheck, tasks);
    issues.insert(issues.end(), cc.begin(), cc.end());
  }
  validateRunOwnership(config, tasks, issues);
  validateOptionSections(config, issues);
  validateCompliance(config, issues);
  validateStorage(config.storage, issues);
  return issues;
}

std::shared_ptr<const Config> defineConfig(Config config) {
  ConfigIssues issues = validateConfig(config);
  if (!issues.empty()) throw ConfigValidationError("defineConfig", std::move(issues));
  return std::make_shared<const Config>(std::move(config));
}

}  // namespace loom::app
