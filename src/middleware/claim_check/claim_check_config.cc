#include "loom/middleware/claim_check/claim_check_config.h"

#include <algorithm>

#include "effects/media.h"
#include "loom/effects/taint.h"

namespace loom::middleware {
namespace {

constexpr std::string_view kPath = "execution.claimCheck";

std::string path(std::string_view leaf) { return std::string(kPath) + "." + std::string(leaf); }

// For an unknown id: "the app's tools are a, b; check the spelling", or that it has none.
std::string toolsOf(const effects::TaskRegistry& tasks) {
  std::string names;
  for (const auto& id : tasks.ids()) {
    if (tasks.find(id)->definition.kind != effects::kKindTool) continue;
    names += (names.empty() ? "" : ", ") + id;
  }
  if (names.empty()) return "the app has no tools; register the tool before boot, or remove the id";
  return "the app's tools are " + names + "; check the spelling";
}

// D2 and the typo check: what only the registry can tell.
void checkAgainstTasks(const ClaimCheckConfig& c, const KnownTasks& known, ConfigIssues& issues) {
  const effects::TaskRegistry& tasks = *known.registry;
  for (const auto& id : *c.toolIds) {
    const effects::Task* task = tasks.find(id);
    if (task && task->definition.kind == effects::kKindLlm) {
      issues.push_back({path("toolIds"),
                        "'" + id +
                            "' is a model (an llm task): offloading a model turn would hand the "
                            "agent loop an envelope; list tools only"});
    }
  }
  if (known.moreToolsAtRun) return;
  for (const auto& id : unregisteredToolIds(c, tasks)) {
    if (id.empty()) continue;  // reported already
    issues.push_back({path("toolIds"), "'" + id +
                                           "' is no tool of this app, so nothing would be "
                                           "offloaded for it: " +
                                           toolsOf(tasks)});
  }
}

}  // namespace

std::vector<std::string> unregisteredToolIds(const ClaimCheckConfig& c,
                                             const effects::TaskRegistry& tasks) {
  std::vector<std::string> out;
  if (!c.toolIds) return out;
  for (const auto& id : *c.toolIds) {
    if (tasks.find(id) == nullptr) out.push_back(id);
  }
  return out;
}

ConfigIssues validateClaimCheckConfig(const ClaimCheckConfig& c, const KnownTasks& tasks) {
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
    }
    if (tasks.registry) checkAgainstTasks(c, tasks, issues);
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
  // D9: only media (what the loop renders as parts, tainted or not) passes through; any other
  // result of a returnsMedia tool is offloaded like any tool's.
  o.passThrough = [&tasks](const effects::EffectContext& ctx, const json::value& result) {
    const effects::Task* task = tasks.find(ctx.effectId);
    return task != nullptr && task->definition.returnsMedia &&
           effects::isMediaResult(effects::untainted(result));
  };
  o.envelopesAreData = true;
  o.effectIds.emplace(c.toolIds->begin(), c.toolIds->end());
  o.agentToolFramesOnly = true;
  o.onOffload = c.onOffload;
  o.onWarn = std::move(onWarn);
  return o;
}

}  // namespace loom::middleware
