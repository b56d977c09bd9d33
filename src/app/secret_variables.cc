#include "loom/app/config.h"
#include "loom/util/child_environment.h"

namespace loom::app {

void markSecretVariables(const Config& config) {
  if (config.security.keys && config.security.keys->env) {
    markSecretVariable(*config.security.keys->env);
  }
  if (config.model) markSecretVariable(config.model->apiKeyEnv);
  for (const auto& rule : config.security.redact) markSecretVariable(rule.env);
}

}  // namespace loom::app
