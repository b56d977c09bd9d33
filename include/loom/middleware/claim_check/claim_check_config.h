// execution.claimCheck (ADR 0140): the agent claim-check opt-in, one grouped option that
// builds the ordinary claimCheckMiddleware for the tools the caller names. Unset, nothing is
// added to the chain. This header is the option's value type and its builder; the app's
// config validation and boot call them (include/loom/app/config.h).
//   - toolIds is required and there is no "all" (D2): the middleware cannot tell a tool from
//     the model call; a listed llm task is refused at boot.
//   - inlineCapBytes defaults to 1 KiB (D4); a tool without a digests entry gets
//     previewDigest(preview) (D3), preview = false records {ref, size} only.
//   - envelopes carry retain: true (D6) unless `reclaimable` names the tool (or is all).
//   - it touches only agent-loop tool frames and passes returnsMedia results through (D9).
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

// Problems of a claim-check config, each naming its full path (execution.claimCheck.toolIds,
// ...). `tasks`, when given, lets it refuse a listed llm task (D2).
ConfigIssues validateClaimCheckConfig(const ClaimCheckConfig& config,
                                      const effects::TaskRegistry* tasks = nullptr);

// The options the opt-in builds (after validation passed). The registry answers returnsMedia
// at call time (tools may be registered after boot but before they run); it must outlive the
// middleware.
ClaimCheckOptions claimCheckOptionsFor(const ClaimCheckConfig& config,
                                       const effects::TaskRegistry& tasks,
                                       std::function<void(std::string_view)> onWarn);

}  // namespace loom::middleware
