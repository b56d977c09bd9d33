#include "loom/app/config.h"
#include "util/child_environment.h"

namespace loom::app {

std::optional<std::string> environmentReference(std::string_view value) {
  if (value.size() < 4 || !value.starts_with("${") || !value.ends_with('}')) return std::nullopt;
  return std::string(value.substr(2, value.size() - 3));
}

void markSecretVariables(const Config& config) {
  if (config.security.keys && config.security.keys->env) {
    markSecretVariable(*config.security.keys->env);
  }
  if (config.model) {
    markSecretVariable(config.model->apiKeyEnv);
    for (const auto& header : config.model->headers) {  // "${NAME}": NAME holds a credential
      const json::value& v = header.value();
      if (auto name = v.is_string() ? environmentReference(v.get_string()) : std::nullopt) {
        markSecretVariable(*name);
      }
    }
  }
  for (const auto& rule : config.security.redact) markSecretVariable(rule.env);
}

}  // namespace loom::app
