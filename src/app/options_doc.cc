// docs/config.md, generated from the option table (a test keeps the file equal to this).
#include "app/options.h"
#include "util/markdown.h"

namespace loom::app {
namespace {

std::string allowedCell(const OptionRow& row) {
  if (!row.allowed.empty()) {
    std::string out;
    for (const auto& a : row.allowed) out += (out.empty() ? "" : ", ") + ("`" + a + "`");
    return out;
  }
  if (row.min && row.max) {
    return optionValueText(*row.min) + " to " + optionValueText(*row.max);
  }
  return "";
}

std::string descriptionCell(const OptionRow& row) {
  std::string out = row.description;
  if (!row.onlyFor.empty()) out = "(kind `" + row.onlyFor + "`) " + out;
  if (row.required) out += " Required.";
  if (row.support == Support::kNotYet) {
    out += " **Not supported by this build yet** (arrives with " + row.arrivesWith +
           "): setting it is an error.";
  }
  if (row.support == Support::kCppOnly) out += " **C++ only**: an error in loom.toml.";
  return markdownCell(out);
}

}  // namespace

std::string configReferenceMarkdown() {
  std::string md =
      "# Configuration reference\n"
      "\n"
      "<!-- Generated from the option table in src/app/options.cc by "
      "loom::app::configReferenceMarkdown().\n"
      "     Do not edit by hand: change the table, then run\n"
      "     LOOM_UPDATE_DOCS=1 build/release/src/agent_app/loom_agent_app_test "
      "--gtest_filter='ConfigDocs.*' -->\n"
      "\n"
      "A Loom app is configured in C++ with `loom::app::defineConfig(Config)` or in a "
      "`loom.toml` file\n"
      "(`loom::app::loadConfigFile`); both give the same validated configuration. Options "
      "live in groups:\n"
      "in C++ the fields of `Config` (`config.storage.eventStore.durability`), in TOML tables "
      "of the same\n"
      "names (`[storage.eventStore]` then `durability = \"normal\"`).\n"
      "\n"
      "Validation happens before anything is opened or created, and reports every problem "
      "at once, each\n"
      "naming the full option path and what is expected: unknown keys, wrong types, "
      "out-of-range values,\n"
      "and options this build does not support yet. A grouped option written at the top "
      "level (for\n"
      "example `claimCheck` or `durability`) is refused with an error naming its grouped "
      "spelling\n"
      "(`execution.claimCheck`). `loom config check <file>` prints the validated "
      "configuration or all\n"
      "of its problems.\n"
      "\n"
      "Options of `[[...]]` entries are written `<array>[].<key>`. See docs/middleware.md "
      "for the\n"
      "middleware chain, the kill switch and redaction.\n";
  for (const OptionRow& row : optionTable()) {
    bool topLevel = row.path.find('.') == std::string::npos;
    if (topLevel) {
      md += "\n## `" + row.path + "`";
      if (row.type != OptionType::kGroup) md += " (agent apps)";
      md += "\n\n" + descriptionCell(row) + "\n\n";
      md += "| Option | Type | Default | Allowed | Description |\n";
      md += "|---|---|---|---|---|\n";
      continue;
    }
    md += "| `" + row.path + "` | " + std::string(optionTypeName(row.type)) + " | " +
          (row.defaultText.empty() ? "" : "`" + markdownCell(row.defaultText) + "`") + " | " +
          allowedCell(row) + " | " + descriptionCell(row) + " |\n";
  }
  return md;
}

}  // namespace loom::app
