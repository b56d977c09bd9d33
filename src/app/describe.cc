// describeConfig, chainLayerNames and checkConfigFile: what `loom config check` prints.
#include "app/options.h"
#include "loom/app/config_file.h"
#include "loom/middleware/kill_switch_config.h"

namespace loom::app {

std::vector<std::string> chainLayerNames(const Config& config) {
  std::vector<std::string> names{std::string(middleware::kKillSwitchName)};
  if (config.execution.claimCheck) names.emplace_back("claimCheck");
  if (!config.security.redact.empty()) names.emplace_back(middleware::kRedactionName);
  for (const auto& m : config.execution.effectMiddleware) {
    names.emplace_back(m ? std::string(m->name()) : "<null>");
  }
  return names;
}

std::string describeConfig(const Config& config) {
  std::string out;
  for (const OptionRow& row : optionTable()) {
    if (!row.show) continue;
    // An empty text: an agent app section the file does not have.
    if (std::string shown = row.show(config); !shown.empty()) {
      out += row.path + " = " + shown + "\n";
    }
  }
  out += "chain, outermost first: ";
  for (const auto& name : chainLayerNames(config)) out += name + " -> ";
  return out + "effect\n";
}

ConfigCheck checkConfigFile(const std::filesystem::path& path) {
  try {
    auto config = loadConfigFile(path);
    return {true, path.string() + ": valid\n" + describeConfig(*config)};
  } catch (const ConfigError& e) {
    return ConfigCheck::failed(e);  // the problems are the answer
  }
}

ConfigCheck ConfigCheck::failed(const ConfigError& e) {
  ConfigCheck check{false, std::string(e.what()) + "\n", {}};
  if (const auto* v = dynamic_cast<const ConfigValidationError*>(&e)) {
    check.problems = v->issues();
  } else {
    check.problems.push_back({"", e.what()});
  }
  return check;
}

}  // namespace loom::app
