#include "loom/plugins/sentinel/sentinel.h"

#include "loom/util/error.h"

namespace loom::plugins {

std::shared_ptr<middleware::ClaimCheckMiddleware> sentinelMiddleware(SentinelOptions options) {
  if (!options.store) throw ConfigError("sentinel: a content store is required (store)");
  if (options.effectIds.empty()) {
    throw ConfigError("sentinel: name the effects whose results it watches (effectIds)");
  }
  middleware::ClaimCheckOptions o;
  o.name = std::string(kSentinelName);
  o.store = std::move(options.store);
  o.inlineCapBytes = options.inlineCapBytes;
  o.retain = false;            // telemetry: TTL-reclaimable (ADR 0054)
  o.envelopesAreData = false;  // classic: an envelope passes as it is
  o.effectIds = std::move(options.effectIds);
  return middleware::claimCheckMiddleware(std::move(o));
}

}  // namespace loom::plugins
