// The sentinel preset (ADR 0083's second consumer of claimCheckMiddleware): a telemetry plugin
// that offloads the large results of the effects it names with the classic ADR 0054 settings
// — a 16 KiB cap, no retain (its envelopes are telemetry: the sweep reclaims their blobs once
// the citing run has ended and the ttl has passed), envelopes passed through as they are. Add
// the middleware it returns to execution.effectMiddleware (C++ only: it holds a store object);
// it is named "sentinel" there, apart from the built-in "claimCheck" layer of
// execution.claimCheck. Thread-safe like the middleware.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "loom/content/content_store.h"
#include "loom/middleware/claim_check/claim_check.h"

namespace loom::plugins {

// The sentinel's name() in a chain (layerNames(), find()).
inline constexpr std::string_view kSentinelName = "sentinel";

struct SentinelOptions {
  std::shared_ptr<content::ContentStore> store;  // required: the store the sweep scans
  std::set<std::string, std::less<>> effectIds;   // required, non-empty
  int64_t inlineCapBytes = middleware::kClassicClaimCheckCapBytes;
};

// Throws ConfigError naming the option when the store is missing or effectIds is empty.
std::shared_ptr<middleware::ClaimCheckMiddleware> sentinelMiddleware(SentinelOptions options);

}  // namespace loom::plugins
