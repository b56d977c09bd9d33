// The environment Loom gives the processes it starts (subprocess tools, MCP servers): the
// parent's, without every variable Loom reads a secret from (the master key's variable, the
// model's API key variable, a redaction rule's secret variable: registered with
// markSecretVariable when the config that names them is loaded), plus what the tool's own
// `env` sets. With inherit = false, only kBaseVariables of the parent's are passed.
// A tool's explicit `env` always wins, a secret variable included (an operator who names it
// there means it). Thread-safe: the registry is under a mutex.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace loom {

// What a child keeps of the parent's environment when it inherits nothing else.
inline constexpr std::string_view kBaseVariables[] = {"PATH", "HOME",   "LANG", "LC_ALL",
                                                      "TZ",   "TMPDIR", "USER"};

// Registers `name` as a variable Loom reads a secret from, for the life of the process.
void markSecretVariable(const std::string& name);
std::set<std::string> secretVariables();

struct ChildEnvironment {
  bool inherit = true;                       // the parent's environment, secrets removed
  std::map<std::string, std::string> extra;  // set on top (wins over the parent's)
};

// "NAME=value" entries for execve.
std::vector<std::string> childEnvironment(const ChildEnvironment& options);

}  // namespace loom
