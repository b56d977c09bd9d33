// loom.toml -> Config, checked key by key against the option table.
#include <toml++/toml.h>

#include <fstream>
#include <sstream>

#include "app/options.h"
#include "loom/app/config_file.h"
#include "loom/json/json.h"
#include "loom/middleware/timeout_config.h"

namespace loom::app {
namespace {

std::string lastSegment(std::string_view path) {
  auto dot = path.rfind('.');
  return std::string(dot == std::string_view::npos ? path : path.substr(dot + 1));
}

// Rows outside entries whose last path segment is `key`: where a misplaced key belongs.
std::vector<std::string> placesOf(std::string_view key) {
  std::vector<std::string> out;
  for (const OptionRow& row : optionTable()) {
    if (row.path.find("[]") == std::string::npos && row.path.find('.') != std::string::npos &&
        lastSegment(row.path) == key) {
      out.push_back(row.path);
    }
  }
  return out;
}

// The keys a table (or an entry, prefix "x[]") accepts.
std::string childKeys(std::string_view prefix) {
  std::string out;
  for (const OptionRow& row : optionTable()) {
    std::string_view p = row.path;
    bool child = prefix.empty()
                     ? p.find('.') == std::string_view::npos
                     : p.size() > prefix.size() + 1 && p.starts_with(prefix) &&
                           p[prefix.size()] == '.' &&
                           p.substr(prefix.size() + 1).find('.') == std::string_view::npos;
    if (child) out += (out.empty() ? "" : ", ") + lastSegment(p);
  }
  return out;
}

std::string joinOr(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

std::string got(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "got a table";
    case toml::node_type::array:
      return "got an array";
    case toml::node_type::string:
      return "got the string " + optionValueText(std::string(n.as_string()->get()));
    case toml::node_type::integer:
      return "got the integer " + std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point:
      return "got the number " + optionValueText(n.as_floating_point()->get());
    case toml::node_type::boolean:
      return n.as_boolean()->get() ? "got true" : "got false";
    default:
      return "got a date/time";
  }
}

std::string expected(const OptionRow& row) {
  switch (row.type) {
    case OptionType::kGroup:
    case OptionType::kTable:
      return "expected a table ([" + row.path + "])";
    case OptionType::kTableArray:
    case OptionType::kMiddleware:
      return "expected an array of tables ([[" + row.path + "]])";
    case OptionType::kInteger:
      return "expected an integer";
    case OptionType::kNumber:
      return "expected a number";
    case OptionType::kBoolean:
      return "expected a boolean (true or false)";
    case OptionType::kStringList:
      return "expected an array of strings";
    case OptionType::kBooleanOrInteger:
      return "expected false or an integer";
    case OptionType::kBooleanOrStringList:
      return "expected a boolean or an array of strings";
    case OptionType::kTableMap:
      return "expected a table of tables ([" + row.path + ".<name>])";
    case OptionType::kInlineTable:
      return "expected an inline table ({ key = value, ... })";
    default:
      return "expected a string";
  }
}

// A TOML value as JSON (tables -> objects; a date or time -> its TOML text).
json::value jsonOfToml(const toml::node& n) {
  if (const auto* t = n.as_table()) {
    json::object out;
    for (const auto& [key, value] : *t) out[key.str()] = jsonOfToml(value);
    return out;
  }
  if (const auto* a = n.as_array()) {
    json::array out;
    for (const auto& element : *a) out.push_back(jsonOfToml(element));
    return out;
  }
  if (const auto* s = n.as_string()) return json::value(std::string_view(s->get()));
  if (const auto* i = n.as_integer()) return json::value(static_cast<int64_t>(i->get()));
  if (const auto* d = n.as_floating_point()) return json::value(d->get());
  if (const auto* b = n.as_boolean()) return json::value(b->get());
  std::ostringstream text;
  if (const auto* dt = n.as_date_time()) text << dt->get();
  if (const auto* d = n.as_date()) text << d->get();
  if (const auto* t = n.as_time()) text << t->get();
  return json::value(text.str());
}

// The value of a scalar node as the row's type, or nullopt when the type is wrong.
std::optional<OptionValue> convert(const toml::node& n, OptionType type) {
  switch (type) {
    case OptionType::kInlineTable:
      if (const auto* t = n.as_table()) return OptionValue(json::toText(jsonOfToml(*t)));
      return std::nullopt;
    case OptionType::kString:
      if (const auto* s = n.as_string()) return OptionValue(std::string(s->get()));
      return std::nullopt;
    case OptionType::kInteger:
      if (const auto* i = n.as_integer()) return OptionValue(static_cast<int64_t>(i->get()));
      return std::nullopt;
    case OptionType::kNumber:
      if (const auto* i = n.as_integer()) return OptionValue(static_cast<double>(i->get()));
      if (const auto* d = n.as_floating_point()) return OptionValue(d->get());
      return std::nullopt;
    case OptionType::kBoolean:
      if (const auto* b = n.as_boolean()) return OptionValue(b->get());
      return std::nullopt;
    case OptionType::kBooleanOrInteger:
      if (const auto* b = n.as_boolean()) return OptionValue(b->get());
      return convert(n, OptionType::kInteger);
    case OptionType::kBooleanOrStringList:
      if (const auto* b = n.as_boolean()) return OptionValue(b->get());
      return convert(n, OptionType::kStringList);
    case OptionType::kStringList: {
      const auto* a = n.as_array();
      if (a == nullptr) return std::nullopt;
      std::vector<std::string> out;
      for (const auto& element : *a) {
        const auto* s = element.as_string();
        if (s == nullptr) return std::nullopt;
        out.emplace_back(s->get());
      }
      return OptionValue(std::move(out));
    }
    default:
      return std::nullopt;
  }
}

class Loader {
 public:
  Loader(Config& config, ConfigIssues& issues) : config_(config), issues_(issues) {}

  void table(const toml::table& t, const std::string& prefix) {
    for (const auto& [key, node] : t) {
      std::string k(key.str());
      std::string path = prefix.empty() ? k : prefix + "." + k;
      const OptionRow* row = findOption(path);
      if (row == nullptr) {
        unknown(path, k, prefix);
      } else if (usable(*row, path)) {
        option(*row, node, path);
      }
    }
  }

  bool entriesShifted() const { return entriesShifted_; }

 private:
  // The array of tables `<row>.<key>` nested in a table array row (tools.mcp in tools).
  static const OptionRow* nestedArray(const OptionRow& row, std::string_view key) {
    const OptionRow* nested = findOption(row.path + "." + std::string(key));
    return nested && nested->type == OptionType::kTableArray ? nested : nullptr;
  }

  static bool holdsOnlyNestedArrays(const OptionRow& row, const toml::table& t) {
    if (t.empty()) return false;
    for (const auto& [key, value] : t) {
      if (nestedArray(row, key.str()) == nullptr) return false;
    }
    return true;
  }

  void add(std::string path, std::string message) {
    issues_.push_back({std::move(path), std::move(message)});
  }

  void unknown(const std::string& path, const std::string& key, const std::string& prefix) {
    std::vector<std::string> places = placesOf(key);
    if (prefix.empty() && !places.empty()) {
      add(path,
          "a grouped option cannot be written at the top level; write it as " + joinOr(places));
    } else if (!places.empty()) {
      add(path, "unknown option; did you mean " + joinOr(places) + "?");
    } else if (prefix.empty()) {
      add(path, "unknown top-level key; expected one of the groups " + childKeys(""));
    } else {
      add(path, "unknown option; " + prefix + " accepts " + childKeys(prefix));
    }
  }

  bool usable(const OptionRow& row, const std::string& path) {
    if (row.support == Support::kNotYet) {
      add(path,
          "not supported by this build yet (it arrives with " + row.arrivesWith + "); remove it");
      return false;
    }
    if (row.support == Support::kCppOnly) {
      add(path, "can only be set from C++ (a " + std::string(optionTypeName(row.type)) +
                    " in the Config passed to defineConfig), not in a TOML file; remove it");
      return false;
    }
    return true;
  }

  void option(const OptionRow& row, const toml::node& node, const std::string& path) {
    switch (row.type) {
      case OptionType::kGroup:
      case OptionType::kTable:
        if (const auto* t = node.as_table()) {
          if (row.set) row.set(config_, OptionValue(true));
          table(*t, path);
        } else {
          add(path, expected(row) + ", " + got(node));
        }
        return;
      case OptionType::kTableArray:
      case OptionType::kMiddleware:
        entries(row, node, path);
        return;
      case OptionType::kTableMap:
        namedEntries(row, node, path);
        return;
      default: {
        auto value = convert(node, row.type);
        if (!value) {
          add(path, expected(row) + ", " + got(node));
        } else if (row.set) {
          row.set(config_, std::move(*value));
        }
      }
    }
  }

  void entries(const OptionRow& row, const toml::node& node, const std::string& path) {
    const auto* array = node.as_array();
    // [[tools.mcp]] with no [[tools]] before it makes `tools` a table holding only `mcp`.
    if (const auto* t = node.as_table(); t && holdsOnlyNestedArrays(row, *t)) {
      table(*t, path);
      return;
    }
    if (array == nullptr) {
      add(path, expected(row) + ", " + got(node));
      return;
    }
    std::size_t built = 0;
    std::optional<std::size_t> timeoutAt;
    for (std::size_t i = 0; i < array->size(); ++i) {
      std::string entryPath = path + "[" + std::to_string(i) + "]";
      const auto* t = (*array)[i].as_table();
      if (t == nullptr) {
        add(entryPath, "expected a table, " + got((*array)[i]));
        continue;
      }
      std::size_t before = issues_.size();
      OptionEntry entry = entryOptions(row, *t, entryPath);
      if (issues_.size() != before) continue;
      row.addEntry(config_, entry, entryPath, issues_);
      if (issues_.size() != before) continue;
      ++built;
      if (row.type == OptionType::kMiddleware && !timeoutAt &&
          std::get<std::string>(entry.front().second) == middleware::kTimeoutName &&
          i + 1 != array->size()) {
        timeoutAt = i;
        add(entryPath,
            "a timeout must be the last (innermost) entry: a timed-out call keeps "
            "running and must not re-enter the middleware after it; move it to "
            "the end");
      }
    }
    if (row.type == OptionType::kMiddleware) entriesShifted_ = built != array->size() || timeoutAt;
  }

  // A table of tables: each sub-table is an entry named by its key.
  void namedEntries(const OptionRow& row, const toml::node& node, const std::string& path) {
    const auto* t = node.as_table();
    if (t == nullptr) {
      add(path, expected(row) + ", " + got(node));
      return;
    }
    for (const auto& [key, value] : *t) {
      std::string entryPath = path + "." + std::string(key.str());
      const auto* entryTable = value.as_table();
      if (entryTable == nullptr) {
        add(entryPath, "expected a table, " + got(value));
        continue;
      }
      std::size_t before = issues_.size();
      OptionEntry entry = entryOptions(row, *entryTable, entryPath);
      if (issues_.size() != before) continue;
      entry.insert(entry.begin(), {"name", OptionValue(std::string(key.str()))});
      row.addEntry(config_, entry, entryPath, issues_);
    }
  }

  // The checked options of one entry; `kind` (when the entry has one) comes first.
  OptionEntry entryOptions(const OptionRow& row, const toml::table& t,
                           const std::string& entryPath) {
    std::string prefix = row.path + "[]";
    OptionEntry entry;
    std::string kind;
    if (const OptionRow* kindRow = findOption(prefix + ".kind")) {
      const toml::node* node = t.get("kind");
      std::optional<OptionValue> value = node ? convert(*node, kindRow->type) : std::nullopt;
      std::optional<std::string> problem =
          value ? checkOptionValue(*kindRow, *value) : std::nullopt;
      if (!node || !value || problem) {
        add(entryPath + ".kind",
            problem ? *problem
                    : std::string(node ? "expected a string, " + got(*node) : "missing") +
                          "; expected kind = " + joinOr(kindRow->allowed));
        return entry;
      }
      kind = std::get<std::string>(*value);
      entry.emplace_back("kind", std::move(*value));
    }
    for (const auto& [key, node] : t) {
      std::string k(key.str());
      if (k == "kind" && !kind.empty()) continue;
      std::string path = entryPath + "." + k;
      const OptionRow* option = findOption(prefix + "." + k);
      // [[tools.mcp]] after a [[tools]] entry lands inside that entry.
      if (const OptionRow* nested = nestedArray(row, k); option == nullptr && nested) {
        if (usable(*nested, path)) entries(*nested, node, path);
        continue;
      }
      if (option == nullptr) {
        add(path,
            "unknown option of a [[" + row.path + "]] entry; expected one of " + childKeys(prefix));
        continue;
      }
      if (!option->onlyFor.empty() && option->onlyFor != kind) {
        add(path, "applies only to kind = \"" + option->onlyFor + "\", not to \"" + kind +
                      "\"; remove it");
        continue;
      }
      auto value = convert(node, option->type);
      if (!value) {
        add(path, expected(*option) + ", " + got(node));
      } else if (auto problem = checkOptionValue(*option, *value)) {
        add(path, *problem);
      } else {
        entry.emplace_back(k, std::move(*value));
      }
    }
    return entry;
  }

  Config& config_;
  ConfigIssues& issues_;
  bool entriesShifted_ = false;
};

// The TOML node of a JSON value (a host's grouped config); null, which TOML cannot hold, is a
// problem at its path and gives nothing.
std::unique_ptr<toml::node> tomlOfJson(const json::value& v, const std::string& path,
                                       ConfigIssues& issues) {
  switch (v.kind()) {
    case boost::json::kind::object: {
      auto t = std::make_unique<toml::table>();
      for (const auto& [key, value] : v.get_object()) {
        std::string k(key);
        std::string at = path.empty() ? k : path + "." + k;
        if (auto node = tomlOfJson(value, at, issues)) t->insert(k, std::move(*node));
      }
      return t;
    }
    case boost::json::kind::array: {
      auto a = std::make_unique<toml::array>();
      const json::array& items = v.get_array();
      for (std::size_t i = 0; i < items.size(); ++i) {
        auto node = tomlOfJson(items[i], path + "[" + std::to_string(i) + "]", issues);
        if (node) a->push_back(std::move(*node));
      }
      return a;
    }
    case boost::json::kind::string:
      return std::make_unique<toml::value<std::string>>(std::string(v.get_string()));
    case boost::json::kind::int64:
      return std::make_unique<toml::value<int64_t>>(v.get_int64());
    case boost::json::kind::uint64:
      if (v.get_uint64() > static_cast<uint64_t>(INT64_MAX)) break;
      return std::make_unique<toml::value<int64_t>>(static_cast<int64_t>(v.get_uint64()));
    case boost::json::kind::double_:
      return std::make_unique<toml::value<double>>(v.get_double());
    case boost::json::kind::bool_:
      return std::make_unique<toml::value<bool>>(v.get_bool());
    case boost::json::kind::null:
      issues.push_back({path, "null is not a value; leave the option out to take its default"});
      return nullptr;
  }
  issues.push_back({path, "the integer " + json::toText(v) + " is out of range"});
  return nullptr;
}

std::shared_ptr<const Config> loadRoot(const toml::table& root, std::string_view origin,
                                       ConfigIssues issues) {
  Config config;
  Loader loader(config, issues);
  loader.table(root, "");
  for (ConfigIssue& issue : validateConfig(config)) {
    // When an entry was not built, the built list's indices are not the file's: the loader
    // has checked the entries' order itself.
    if (loader.entriesShifted() && issue.path.starts_with("execution.effectMiddleware[")) {
      continue;
    }
    issues.push_back(std::move(issue));
  }
  if (!issues.empty()) throw ConfigValidationError(std::string(origin), std::move(issues));
  return std::make_shared<const Config>(std::move(config));
}

}  // namespace

std::shared_ptr<const Config> parseConfigToml(std::string_view text, std::string_view origin) {
  toml::table root;
  try {
    root = toml::parse(text, std::string(origin));
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw ConfigValidationError(
        std::string(origin),
        {{"", "not valid TOML at line " + std::to_string(at.line) + ", column " +
                  std::to_string(at.column) + ": " + std::string(e.description())}});
  }
  return loadRoot(root, origin, {});
}

std::shared_ptr<const Config> parseConfigJson(const json::value& groups, std::string_view origin) {
  if (!groups.is_object()) {
    throw ConfigValidationError(std::string(origin),
                                {{"", "expected an object of groups (execution, security, "
                                      "compliance, storage, observability), got " +
                                          json::toText(groups).substr(0, 80)}});
  }
  ConfigIssues issues;
  std::unique_ptr<toml::node> root = tomlOfJson(groups, "", issues);
  return loadRoot(*root->as_table(), origin, std::move(issues));
}

std::shared_ptr<const Config> loadConfigFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    std::string reason =
        std::filesystem::exists(path, ec) ? "it cannot be read (permissions?)" : "no such file";
    throw ConfigValidationError(
        path.string(), {{"", "cannot read the config file " + path.string() + ": " + reason}});
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parseConfigToml(text.str(), path.string());
}

}  // namespace loom::app
