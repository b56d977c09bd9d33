#include "loom/middleware/claim_check/claim_check_config.h"

#include <algorithm>

namespace loom::middleware {
namespace {

constexpr std::string_view kPath = "execution.claimCheck";

std::string path(std::string_view leaf) { return std::string(kPath) + "." + std::string(leaf); }

}  // namespace

ConfigIssues validateClaimCheckConfig(const ClaimCheckConfig& c,
                                      const effects::TaskRegistry* tasks) {
  ConfigIssues issues;
  auto add = [&](std::string p, std::string message) {
    issues.push_back(ConfigIssue{std::move(p), std::move(message)});
  };
  if (!c.store && c.storeName != "default") {
    add(path("store"), "expected a content store object, or the name \"default\" "
                       "(storage.contentStore)");
  }
  if (!c.toolIds || c.toolIds->empty()) {
    add(path("toolIds"),
        "required: list the tools whose large outputs are offloaded (there is no \"all\": the "
        "middleware cannot tell a tool from the model call)");
  } else {
    for (const auto& id : *c.toolIds) {
      if (id.empty()) add(path("toolIds"), "tool ids must be non-empty strings");
      const effects::Task* task = tasks ? tasks->find(id) : nullptr;
      if (task && task->definition.kind == effects::kKindLlm) {
        add(path("toolIds"), "'" + id +
                                 "' is a model (an llm task): offloading a model turn would hand "
                                 "the agent loop an envelope; list tools only");
      }
    }
  }
  if (c.inlineCapBytes < 0) add(path("inlineCapBytes"), "must be >= 0");
  if (c.preview && *c.preview < 0) add(path("preview"), "must be false or a character count >= 0");
  for (const auto& [id, fn] : c.digests) {
    if (!fn) add(path("digests." + id), "has no digest function");
  }
  return issues;
}

ClaimCheckOptions claimCheckOptionsFor(const ClaimCheckConfig& c,
                                       const effects::TaskRegistry& tasks,
                                       std::function<void(std::string_view)> onWarn) {
  ClaimCheckOptions o;
  o.store = c.store;
  o.inlineCapBytes = c.inlineCapBytes;
  o.digests = c.digests;
  if (c.preview) o.defaultDigest = previewDigest(*c.preview);
  std::vector<std::string> reclaimable = c.reclaimable;
  bool all = c.reclaimableAll;
  o.retainFor = [reclaimable, all](std::string_view id) {
    return !all && std::find(reclaimable.begin(), reclaimable.end(), id) == reclaimable.end();
  };
  o.passThrough = [&tasks](const effects::EffectContext& ctx, const json::value&) {
    const effects::Task* task = tasks.find(ctx.effectId);
    return task != nullptr && task->definition.returnsMedia;
  };
  o.envelopesAreData = true;
  o.effectIds.emplace(c.toolIds->begin(), c.toolIds->end());
  o.agentToolFramesOnly = true;
  o.onOffload = c.onOffload;
  o.onWarn = std::move(onWarn);
  return o;
}

}  // namespace loom::middleware
