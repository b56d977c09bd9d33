// The option table. Each row is one option of loom::app::Config (or of a loom.toml entry);
// adding an option is adding a row here and its field in config.h.
#include "app/options.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <mutex>

#include "claim_check_option_rows.h"
#include "compliance_option_rows.h"
#include "content_option_rows.h"
#include "effect_middleware_entry.h"
#include "loom/middleware/middleware_factory.h"
#include "loom/middleware/retry_config.h"
#include "loom/middleware/timeout_config.h"
#include "postgres/pg_connection.h"
#include "observability_option_rows.h"
#include "run_ownership_option_rows.h"

namespace loom::app {
namespace {

// Binds a string field of Config to a row.
template <typename Field>
void bindString(OptionRow& row, Field field) {
  row.set = [field](Config& c, OptionValue v) { field(c) = std::get<std::string>(std::move(v)); };
  row.get = [field](const Config& c) { return OptionValue(field(c)); };
}

OptionType entryOptionType(middleware::EntryOption::Type type) {
  switch (type) {
    case middleware::EntryOption::Type::kInteger:
      return OptionType::kInteger;
    case middleware::EntryOption::Type::kNumber:
      return OptionType::kNumber;
    case middleware::EntryOption::Type::kStringList:
      return OptionType::kStringList;
  }
  return OptionType::kString;
}

std::string showRedactRules(const Config& c) {
  std::string out = "[";
  for (const auto& rule : c.security.redact) {
    if (out.size() > 1) out += ", ";
    out += "{name = \"" + rule.name + "\", ";
    if (!rule.value.empty()) {
      out += "value = <hidden, " + std::to_string(rule.value.size()) + " characters>}";
    } else if (!rule.env.empty()) {
      out += "env = \"" + rule.env + "\"}";
    } else {
      out += "pattern = " + optionValueText(rule.pattern) + "}";
    }
  }
  return out + "]";
}

void addRedactEntry(Config& c, const OptionEntry& entry, const std::string&, ConfigIssues&) {
  middleware::RedactionRule rule;
  for (const auto& [key, value] : entry) {
    const std::string& text = std::get<std::string>(value);
    if (key == "name") rule.name = text;
    if (key == "value") rule.value = text;
    if (key == "env") rule.env = text;
    if (key == "pattern") rule.pattern = text;
  }
  c.security.redact.push_back(std::move(rule));
}

std::vector<OptionRow> buildTable() {
  namespace mw = loom::middleware;
  std::vector<OptionRow> rows;
  auto row = [&rows](std::string path, OptionType type, std::string description) -> OptionRow& {
    OptionRow& r = rows.emplace_back();
    r.path = std::move(path);
    r.type = type;
    r.description = std::move(description);
    return r;
  };
  // (Support::kNotYet rows reserve an option for a later version; none is pending now.)

  // execution ---------------------------------------------------------------------------
  row("execution", OptionType::kGroup, "How effects run: the middleware chain and the journal.");
  {
    OptionRow& r = row("execution.effectMiddleware", OptionType::kMiddleware,
                       "User middleware, outermost first. The chain is built once at boot: "
                       "kill switch, claim-check (when configured), secret redaction, then "
                       "these entries, then the effect. C++: `shared_ptr<effects::Middleware>` "
                       "objects. loom.toml: `[[execution.effectMiddleware]]` tables whose "
                       "`kind` picks a ready-made middleware. A timeout must be the last entry.");
    r.defaultText = "[]";
    r.addEntry = addEffectMiddlewareEntry;
    r.show = showEffectMiddleware;
  }
  {
    OptionRow& r = row("execution.effectMiddleware[].kind", OptionType::kString,
                       "Which ready-made middleware this entry builds.");
    for (const auto& factory : mw::readyMadeMiddleware()) r.allowed.emplace_back(factory.kind);
    r.required = true;
  }
  // Each ready-made middleware owns its entry options (middleware_factory.h).
  for (const auto& factory : mw::readyMadeMiddleware()) {
    for (const auto& option : factory.options) {
      OptionRow& r = row("execution.effectMiddleware[]." + option.key, entryOptionType(option.type),
                         option.description);
      r.defaultText = option.defaultText;
      r.min = option.min;
      r.max = option.max;
      r.allowed = option.allowed;
      r.onlyFor = factory.kind;
    }
  }
  row("execution.journal", OptionType::kTable, "How steps are journaled.");
  {
    OptionRow& r = row("execution.journal.modelInput", OptionType::kString,
                       "How an agent's model turn journals its input: `delta` records what was "
                       "appended since the previous turn, `full` the whole transcript.");
    r.defaultText = "\"delta\"";
    r.allowed = {"delta", "full"};
    bindString(
        r, [](auto& c) -> auto& { return c.execution.journal.modelInput; });
  }
  {
    OptionRow& r = row(
        "execution.snapshotEveryEvents", OptionType::kInteger,
        "Write a snapshot of a run's replay state (docs/spec/snapshots.md) when it parks and "
        "whenever its log has grown by this many events since the last one, so a resume reads "
        "the snapshot and the events after it instead of the whole log; an agent loop keeps a "
        "checkpoint in it and resumes from its last turn. `0` writes none (existing ones are "
        "still read).");
    r.defaultText = "1000";
    r.min = 0;
    r.max = 1'000'000'000;
    r.set = [](Config& c, OptionValue v) {
      c.execution.snapshotEveryEvents = std::get<int64_t>(v);
    };
    r.get = [](const Config& c) { return OptionValue(c.execution.snapshotEveryEvents); };
  }
  {
    OptionRow& r = row(
        "execution.codeVersion", OptionType::kString,
        "The code version this program or app declares: each run records it and continues only "
        "on code that declares the same (docs/operations.md, \"Deploying new code\"). Unset: "
        "an agent app's is a digest of its file and the files it names in its folder, a "
        "program's the build id of its native code. Up to 128 printable characters; change it "
        "with each change of the workflows' code.");
    r.defaultText = "\"\"";
    bindString(
        r, [](auto& c) -> auto& { return c.execution.codeVersion; });
  }
  {
    OptionRow& r = row(
        "execution.versioning", OptionType::kString,
        "What a run recorded on another code version does on this code: `pinned` refuses to "
        "continue it (resume, signal and retry say so, naming both versions; a worker leaves "
        "it for a worker of its version); `latest` continues it here, checking its replay: a "
        "recorded step the code does not ask for, or asks for as another effect, parks the run "
        "`diverged` at that step before anything new runs (docs/operations.md, \"Deploying new "
        "code\").");
    r.defaultText = "\"pinned\"";
    r.allowed = {"pinned", "latest"};
    bindString(
        r, [](auto& c) -> auto& { return c.execution.versioning; });
  }
  addClaimCheckRows(rows);
  addRunOwnershipRows(rows);

  // security ----------------------------------------------------------------------------
  row("security", OptionType::kGroup, "Secrets, the master key and encryption at rest.");
  {
    OptionRow& r = row("security.redact", OptionType::kTableArray,
                       "Secret redaction rules. Every match in an effect's result (every "
                       "string, object keys too, and every number by its digits), in each "
                       "journaled effect input, in a run's input and output and in signal "
                       "payloads becomes `[REDACTED:<name>]`, before anything is journaled or "
                       "offloaded. Each rule gives exactly one of `value`, `env`, `pattern`.");
    r.defaultText = "[]";
    r.addEntry = addRedactEntry;
    r.show = showRedactRules;
  }
  {
    OptionRow& r = row("security.redact[].name", OptionType::kString,
                       "Shown in the marker; 1 to 64 of A-Z a-z 0-9 _ . -, unique.");
    r.required = true;
  }
  row("security.redact[].value", OptionType::kString, "A literal secret, at least 4 characters.");
  row("security.redact[].env", OptionType::kString,
      "An environment variable whose value (read at boot) is the secret.");
  row("security.redact[].pattern", OptionType::kString,
      "A regular expression (RE2 syntax: linear time, no backreferences or lookaround) "
      "that must not match the empty string; one that does not compile is refused here.");
  addSecurityKeyRows(rows);

  // compliance --------------------------------------------------------------------------
  row("compliance", OptionType::kGroup, "Erasure and export of a data subject's data.");
  addComplianceRows(rows);

  // storage -----------------------------------------------------------------------------
  row("storage", OptionType::kGroup, "Where Loom keeps its data.");
  {
    OptionRow& r = row("storage.home", OptionType::kString,
                       "The home folder, created at boot. It holds `loom.db` (the SQLite "
                       "event store and the kill switch, which lives there whatever the "
                       "event store kind). With `storage.url` it keeps only what stays on "
                       "this machine: the staging folder of retention's archive segments.");
    r.defaultText = "\".loom\"";
    r.required = true;
    bindString(
        r, [](auto& c) -> auto& { return c.storage.home; });
  }
  {
    OptionRow& r = row("storage.url", OptionType::kString,
                       "A PostgreSQL server (`postgresql://user@host:5432/db`, or a libpq "
                       "connection string): every store moves to it, shared by workers on many "
                       "machines (docs/operations.md, \"Running on PostgreSQL\"). The `loom` "
                       "command line reads `LOOM_DATABASE_URL` instead. Shown with its "
                       "password as `***`; prefer `PGPASSWORD` or `~/.pgpass` to a password in "
                       "the file.");
    r.defaultText = "\"\" (the embedded home)";
    bindString(
        r, [](auto& c) -> auto& { return c.storage.url; });
    r.show = [](const Config& c) { return optionValueText(postgres::redactUrl(c.storage.url)); };
  }
  {
    OptionRow& r = row("storage.schema", OptionType::kString,
                       "With `storage.url`: the PostgreSQL schema of Loom's tables (lower-case "
                       "letters, digits, `_`); one server can hold several deployments. The "
                       "`loom` command line reads `LOOM_DATABASE_SCHEMA` instead.");
    r.defaultText = "\"loom\"";
    bindString(
        r, [](auto& c) -> auto& { return c.storage.schema; });
  }
  row("storage.eventStore", OptionType::kTable, "The execution logs.");
  {
    OptionRow& r = row("storage.eventStore.kind", OptionType::kString,
                       "`sqlite`: `<home>/loom.db`; `memory`: in the process, lost at exit.");
    r.defaultText = "\"sqlite\"";
    r.allowed = {"sqlite", "memory"};
    bindString(
        r, [](auto& c) -> auto& { return c.storage.eventStore.kind; });
  }
  {
    OptionRow& r = row("storage.eventStore.durability", OptionType::kString,
                       "`full`: every commit is fsynced (survives power loss); `normal`: "
                       "survives a process crash, may lose the last commits on power loss.");
    r.defaultText = "\"full\"";
    r.allowed = {"full", "normal"};
    bindString(
        r, [](auto& c) -> auto& { return c.storage.eventStore.durability; });
  }
  addContentStorageRows(rows);

  // observability -----------------------------------------------------------------------
  row("observability", OptionType::kGroup,
      "Warnings and what models cost. (`logLevel` was removed: nothing read it.)");
  {
    OptionRow& r = row("observability.onWarn", OptionType::kCallback,
                       "Receives report-only warnings; must be thread-safe. Without it "
                       "warnings go to stderr.");
    r.defaultText = "stderr";
    r.support = Support::kCppOnly;
    r.show = [](const Config& c) {
      return std::string(c.observability.onWarn ? "<C++ callback>" : "<stderr>");
    };
  }
  addObservabilityRows(rows);

  for (OptionRow& r : rows) {
    if (!r.show && r.get) {
      r.show = [get = r.get](const Config& c) { return optionValueText(get(c)); };
    }
  }
  return rows;
}

// Option text has one home: middleware::optionValueText.
std::string quoted(std::string_view s) { return optionValueText(std::string(s)); }
std::string numberText(double v) { return optionValueText(v); }

std::string rangeText(const OptionRow& row) {
  std::string kind = row.type == OptionType::kInteger ? "an integer" : "a number";
  return kind + " from " + numberText(*row.min) + " to " + numberText(*row.max);
}

std::string allowedText(const std::vector<std::string>& allowed) {
  std::string out;
  for (const auto& a : allowed) out += (out.empty() ? "" : ", ") + quoted(a);
  return out;
}

}  // namespace

namespace {

// The table as built for the sections added so far, with its index by path. A new section
// builds a new table; earlier ones are kept, so a row read before stays valid.
struct BuiltTable {
  std::vector<OptionRow> rows;
  std::map<std::string, const OptionRow*, std::less<>> byPath;
};

struct SectionRegistry {
  std::mutex mu;
  std::vector<OptionSection> sections;             // GUARDED_BY(mu)
  std::vector<std::unique_ptr<BuiltTable>> built;  // GUARDED_BY(mu); the last is current
};

SectionRegistry& sectionRegistry() {
  static SectionRegistry registry;
  return registry;
}

std::unique_ptr<BuiltTable> buildWith(const std::vector<OptionSection>& sections) {
  auto table = std::make_unique<BuiltTable>();
  table->rows = buildTable();
  for (const auto& section : sections) section.addRows(table->rows);
  for (const auto& row : table->rows) table->byPath.emplace(row.path, &row);
  return table;
}

const BuiltTable& currentTable() {
  SectionRegistry& r = sectionRegistry();
  std::lock_guard lock(r.mu);
  if (r.built.empty()) r.built.push_back(buildWith(r.sections));
  return *r.built.back();
}

}  // namespace

void addOptionSection(OptionSection section) {
  SectionRegistry& r = sectionRegistry();
  {
    std::lock_guard lock(r.mu);
    for (const auto& s : r.sections) {
      if (s.name == section.name) return;
    }
    r.sections.push_back(std::move(section));
    if (!r.built.empty()) r.built.push_back(buildWith(r.sections));  // the old one stays alive
  }
}

void validateOptionSections(const Config& config, ConfigIssues& issues) {
  std::vector<OptionSection> sections;
  {
    std::lock_guard lock(sectionRegistry().mu);
    sections = sectionRegistry().sections;
  }
  for (const auto& section : sections) section.validate(config, issues);
}

const std::vector<OptionRow>& optionTable() { return currentTable().rows; }

const OptionRow* findOption(std::string_view path) {
  const auto& index = currentTable().byPath;
  auto it = index.find(path);
  return it == index.end() ? nullptr : it->second;
}

std::optional<std::string> checkOptionValue(const OptionRow& row, const OptionValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) {
    if (row.required && s->empty()) return std::string("expected a non-empty string");
    if (!row.allowed.empty() &&
        std::find(row.allowed.begin(), row.allowed.end(), *s) == row.allowed.end()) {
      return "expected one of " + allowedText(row.allowed) + "; got " + quoted(*s);
    }
    return std::nullopt;
  }
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
    for (const auto& s : *list) {
      if (!row.allowed.empty() &&
          std::find(row.allowed.begin(), row.allowed.end(), s) == row.allowed.end()) {
        return "expected each element to be one of " + allowedText(row.allowed) + "; got " +
               quoted(s);
      }
    }
    return std::nullopt;
  }
  double number = 0;
  if (const auto* i = std::get_if<int64_t>(&value)) number = static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value)) number = *d;
  if (std::holds_alternative<bool>(value) || !row.min || !row.max) return std::nullopt;
  if (!(number >= *row.min && number <= *row.max)) {
    return "expected " + rangeText(row) + "; got " + optionValueText(value);
  }
  return std::nullopt;
}

std::string_view optionTypeName(OptionType type) {
  switch (type) {
    case OptionType::kGroup:
      return "group";
    case OptionType::kTable:
      return "table";
    case OptionType::kTableArray:
      return "array of tables";
    case OptionType::kMiddleware:
      return "middleware list";
    case OptionType::kString:
      return "string";
    case OptionType::kInteger:
      return "integer";
    case OptionType::kNumber:
      return "number";
    case OptionType::kBoolean:
      return "boolean";
    case OptionType::kStringList:
      return "array of strings";
    case OptionType::kCallback:
      return "C++ callback";
    case OptionType::kBooleanOrInteger:
      return "false or integer";
    case OptionType::kBooleanOrStringList:
      return "boolean or array of strings";
    case OptionType::kTableMap:
      return "table of tables";
    case OptionType::kInlineTable:
      return "inline table";
  }
  return "unknown";
}

}  // namespace loom::app
