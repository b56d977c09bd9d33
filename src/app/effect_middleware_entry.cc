#include "effect_middleware_entry.h"

#include "loom/middleware/middleware_factory.h"

namespace loom::app {
void addEffectMiddlewareEntry(Config& c, const OptionEntry& entry, const std::string& entryPath,
                              ConfigIssues& issues) {
  std::string kind;
  for (const auto& [key, value] : entry) {
    if (key == "kind") kind = std::get<std::string>(value);
  }
  const middleware::MiddlewareFactory* factory = middleware::findMiddlewareFactory(kind);
  if (factory == nullptr) return;  // the kind row's allowed values refused it already
  if (auto built = factory->build(entry, entryPath, issues)) {
    c.execution.effectMiddleware.push_back(std::move(built));
  }
}

std::string showEffectMiddleware(const Config& c) {
  std::string out = "[";
  for (const auto& m : c.execution.effectMiddleware) {
    if (out.size() > 1) out += ", ";
    out += m ? m->describe() : "<null>";
  }
  return out + "]";
}

}  // namespace loom::app
