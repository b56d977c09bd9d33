// loom.toml: the same configuration as a C++ Config, written as TOML tables named by group
// ([execution], [storage.eventStore], [[security.redact]], ...). The loader checks every key
// against the option table (options.h) and produces the same validated, frozen Config that
// defineConfig does; every problem of a file (syntax, unknown key, wrong type, out-of-range
// value, a grouped option written flat, an option this build does not support yet) is
// reported at once. Also what `loom config check <file>` prints.
// Thread-safety: free functions; nothing shared.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "loom/app/config.h"

namespace loom::app {

// Parses and validates loom.toml text; `origin` names it in messages (usually its path).
// Throws ConfigValidationError listing every problem.
std::shared_ptr<const Config> parseConfigToml(std::string_view text, std::string_view origin);

// The same grouped configuration given as JSON (a Python or Node.js host's dict or object,
// keys spelled as in loom.toml: {"execution": {"claimCheck": {"toolIds": [...]}}}), checked
// against the same option table with the same messages; a null value is a problem at its path.
// Throws ConfigValidationError listing every problem.
std::shared_ptr<const Config> parseConfigJson(const json::value& groups, std::string_view origin);

// Reads and parses the file at `path`. A file that cannot be read is a ConfigValidationError
// too (one problem naming the path and the reason).
std::shared_ptr<const Config> loadConfigFile(const std::filesystem::path& path);

// The validated configuration as text, one "path = value" line per option in table order
// (defaults filled in, literal secrets hidden), then the chain boot would build, outermost
// first.
std::string describeConfig(const Config& config);

// The names of the layers boot builds for `config`, outermost first ("killSwitch",
// "redaction", then each effectMiddleware name).
std::vector<std::string> chainLayerNames(const Config& config);

struct ConfigCheck {
  bool ok = false;
  std::string text;       // ok: describeConfig; not ok: every problem, one per line
  ConfigIssues problems;  // not ok: the same problems as values

  // The answer for a config that failed: its problems as text and as values.
  static ConfigCheck failed(const ConfigError& e);
};

// What `loom config check <file>` prints: the validated config, or all of its problems.
// Never throws a ConfigError (it is the answer); other errors propagate.
ConfigCheck checkConfigFile(const std::filesystem::path& path);

}  // namespace loom::app
