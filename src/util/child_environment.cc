#include "util/child_environment.h"

#include <algorithm>
#include <mutex>

extern char** environ;

namespace loom {
namespace {

std::mutex& registryMutex() {
  static std::mutex mu;
  return mu;
}

std::set<std::string>& registry() {
  static std::set<std::string> names;  // GUARDED_BY(registryMutex())
  return names;
}

bool isBase(std::string_view name) {
  return std::find(std::begin(kBaseVariables), std::end(kBaseVariables), name) !=
         std::end(kBaseVariables);
}

}  // namespace

void markSecretVariable(const std::string& name) {
  if (name.empty()) return;
  std::lock_guard lock(registryMutex());
  registry().insert(name);
}

std::set<std::string> secretVariables() {
  std::lock_guard lock(registryMutex());
  return registry();
}

std::vector<std::string> childEnvironment(const ChildEnvironment& options) {
  const std::set<std::string> secrets = secretVariables();
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv(*e);
    std::string name(kv.substr(0, kv.find('=')));
    if (options.extra.contains(name) || secrets.contains(name)) continue;
    if (!options.inherit && !isBase(name)) continue;
    env.emplace_back(kv);
  }
  for (const auto& [k, v] : options.extra) env.push_back(k + "=" + v);
  return env;
}

}  // namespace loom
