// execution.claimCheck (ADR 0140): the agent claim-check opt-in, one grouped option that
// builds the ordinary claimCheckMiddleware for the tools the caller names. Unset, nothing is
// added to the chain. This header is the option's value type and its builder; the app's
// config validation and boot call them (include/loom/app/config.h).
//   - toolIds is required and there is no "all" (D2): the middleware cannot tell a tool from
//     the model call; a listed llm task is refused at boot.
//   - inlineCapBytes defaults to 1 KiB (D4); a tool without a digests entry gets
//     previewDigest(preview) (D3), preview = false records {ref, size} only.
//   - envelopes carry retain: true (D6) unless `reclaimable` names the tool (or is all).
//   - it touches only agent-loop tool frames and passes a returnsMedia tool's media results
//     ({"parts": [...]}, effects/media.h) through; its other results are offloaded (D9).
//   - onOffload's throw is reported through onWarn (L).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loom/content/content_store.h"
#include "loom/effects/task.h"
#include "loom/middleware/claim_check/claim_check.h"
#include "loom/middleware/config_issue.h"

namespace loom::middleware {

inline constexpr int64_t DEFAULT_CLAIM_CHECK_CAP_BYTES = 1024;
inline constexpr int64_t DEFAULT_CLAIM_CHECK_PREVIEW_CHARS = 256;

struct ClaimCheckConfig {
  // The content store blobs go to: the same object you hand sweepUnpinnedContent. In
  // loom.toml, `store` names a configured store ("default" = storage.contentStore).
  std::shared_ptr<content::ContentStore> store;
  std::string storeName = "default";
  // Required, non-empty: the tools whose over-cap results are offloaded (no "all").
  std::optional<std::vector<std::string>> toolIds;
  int64_t inlineCapBytes = DEFAULT_CLAIM_CHECK_CAP_BYTES;
  // Per tool id: a pure function of the result that replaces the preview. It is prompt text:
  // keep it free of untrusted content.
  std::map<std::string, DigestFn, std::less<>> digests;
  // How each digest was declared in loom.toml (for describing the config); C++ digests have
  // no entry here.
  std::map<std::string, std::string, std::less<>> digestSources;
  // Characters of the default preview digest; nullopt = preview: false ({ref, size} only).
  std::optional<int64_t> preview = DEFAULT_CLAIM_CHECK_PREVIEW_CHARS;
  std::function<void(const OffloadInfo&)> onOffload;
  // The audit trade (D6): these tools' envelopes carry no retain, so their blobs are
  // TTL-reclaimed by the sweep (resolveClaimCheck then returns null). All of them when
  // reclaimableAll.
  bool reclaimableAll = false;
  std::vector<std::string> reclaimable;
};

// What validation knows of the app's tasks when it checks toolIds.
struct KnownTasks {
  // The app's registered tasks (boot's registry, or the one `loom config check` builds for an
  // agent app); nullptr: none are known yet (defineConfig), so no id is checked against them.
  const effects::TaskRegistry* registry = nullptr;
  // The app registers more tools when it runs: an agent app's [[tools.mcp]] servers, which
  // `loom config check` does not start. An id no registered task has is then not an error
  // here; boot, with the servers' tools registered, refuses it.
  bool moreToolsAtRun = false;
};

// Problems of a claim-check config, each naming its full path (execution.claimCheck.toolIds,
// ...). With a registry it also refuses a listed llm task (D2) and an id no registered task
// has (a typo would offload nothing), naming the app's tools.
ConfigIssues validateClaimCheckConfig(const ClaimCheckConfig& config, const KnownTasks& tasks = {});

// The listed toolIds that no task of `tasks` has, in list order.
std::vector<std::string> unregisteredToolIds(const ClaimCheckConfig& config,
                                             const effects::TaskRegistry& tasks);

// The options the opt-in builds (after validation passed). The registry answers returnsMedia
// at call time; it must outlive the middleware (tasks are registered before boot, app.h).
ClaimCheckOptions claimCheckOptionsFor(const ClaimCheckConfig& config,
                                       const effects::TaskRegistry& tasks,
                                       std::function<void(std::string_view)> onWarn);

}  // namespace loom::middleware
