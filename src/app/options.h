// The option table: one row per configuration option (path, type, default, allowed values or
// range, description, and whether this build supports it). It drives the validation of
// loom.toml (unknown keys, wrong types, out-of-range values, flat spellings, options a later
// version adds) and of a C++ Config, describeConfig, and the generated docs/config.md, so
// code and docs cannot drift. Adding an option is adding a row (and its Config field).
// Thread-safety: the table is built once and read-only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "loom/app/config.h"
#include "loom/middleware/middleware_factory.h"

namespace loom::app {

enum class OptionType {
  kGroup,       // a top-level group: [execution]
  kTable,       // a nested table: [storage.eventStore]
  kTableArray,  // entries [[security.redact]]; their options are rows "<path>[].<key>"
  kMiddleware,  // execution.effectMiddleware: C++ Middleware objects; TOML [[...]] with kind
  kString,
  kInteger,
  kNumber,  // integer or floating point
  kBoolean,
  kStringList,
  kCallback,             // a C++ std::function
  kBooleanOrInteger,     // false, or a count (execution.claimCheck.preview)
  kBooleanOrStringList,  // true, or a list of ids (execution.claimCheck.reclaimable)
  kTableMap,     // a table of tables keyed by a name; their options are rows "<path>[].<key>"
  kInlineTable,  // any TOML table, kept as JSON text (an agent tool's inputSchema)
};

enum class Support {
  kSupported,  // validated and used
  kCppOnly,    // settable from C++ only; in loom.toml it is a ConfigError
  kNotYet,     // reserved for a later version; setting it is a ConfigError
};

// One option's value, and the options given in one [[...]] entry by key (the same types the
// ready-made middleware factories read, middleware_factory.h).
using OptionValue = middleware::OptionValue;
using OptionEntry = middleware::OptionEntry;

struct OptionRow {
  std::string path;  // "storage.eventStore.durability"; entry options: "security.redact[].name"
  OptionType type = OptionType::kString;
  std::string defaultText;           // as docs/config.md shows it; empty: none
  std::vector<std::string> allowed;  // the accepted values of a string (list) option
  std::optional<double> min;         // range of an integer or number option
  std::optional<double> max;
  std::string description;
  Support support = Support::kSupported;
  std::string arrivesWith;  // kNotYet: the work that adds it (shown in errors and docs)
  std::string onlyFor;      // entry options: the `kind` they belong to; empty: every kind
  bool required = false;    // entry options that must be given; strings that must be non-empty

  // Binding to Config. Scalar options have get and set (set by the TOML loader; get checked
  // against allowed/min/max by validateConfig); a table's set, when present, is called with
  // `true` when the file has the table; table arrays have addEntry (called with an entry
  // whose keys and types were checked; a table map's entries start with ("name", key));
  // show renders the value for describeConfig.
  std::function<void(Config&, OptionValue)> set;
  std::function<OptionValue(const Config&)> get;
  std::function<void(Config&, const OptionEntry&, const std::string& entryPath, ConfigIssues&)>
      addEntry;
  std::function<std::string(const Config&)> show;
};

// A part of loom.toml that a module above app defines and owns: the agent app's [agent],
// [model] and [[tools]] (src/agent_app). Its rows join the one table after the groups (so
// loom.toml, describeConfig and docs/config.md know them) and validateConfig runs its checks.
struct OptionSection {
  std::string name;  // unique; a second section of one name is ignored
  std::function<void(std::vector<OptionRow>& rows)> addRows;
  std::function<void(const Config& config, ConfigIssues& issues)> validate;
};
// Adds `section` (idempotent by name). Call it before the table is read by another thread
// (from main, or before boot); rows read earlier stay valid.
void addOptionSection(OptionSection section);

// Every row, groups first in the order execution, security, compliance, storage,
// observability, then each added section's rows; each table's rows follow it.
const std::vector<OptionRow>& optionTable();
// Runs the checks of every added section on `config`.
void validateOptionSections(const Config& config, ConfigIssues& issues);
// The row at `path` (entry options as "<array>[].<key>"), nullptr when there is none.
const OptionRow* findOption(std::string_view path);

// Checks `value` against the row's allowed values and range; returns what is wrong
// ("expected one of \"full\", \"normal\"; got \"fast\"") or nullopt when it is fine.
std::optional<std::string> checkOptionValue(const OptionRow& row, const OptionValue& value);
// Human name of a row's type for messages and docs ("string", "array of tables", ...).
std::string_view optionTypeName(OptionType type);
// `value` as TOML-ish text: "full" quoted, numbers plain, lists in brackets.
using middleware::optionValueText;

// docs/config.md: the reference of every option, generated from optionTable().
std::string configReferenceMarkdown();

}  // namespace loom::app
