#include "loom/middleware/claim_check/claim_check.h"

#include "content/claim_check_envelope.h"
#include "effects/step_ids.h"
#include "loom/effects/taint.h"
#include "loom/util/error.h"

namespace loom::middleware {

using content::kClaimCheckKey;

namespace {
// The options' rules but the store's.
void checkNameAndCap(const ClaimCheckOptions& o) {
  if (o.name.empty()) {
    throw ConfigError("claim-check needs a non-empty name (option name; the default is \"" +
                      std::string(kClaimCheckName) + "\")");
  }
  if (o.inlineCapBytes < 0) {
    throw ConfigError("claim-check inlineCapBytes must be >= 0, not " +
                      std::to_string(o.inlineCapBytes));
  }
}
}  // namespace

ClaimCheckMiddleware::ClaimCheckMiddleware(std::shared_ptr<const ClaimCheckOptions> options)
    : options_(std::move(options)) {
  if (!options_ || !options_->store) {
    throw ConfigError("claim-check needs a content store (option store)");
  }
  checkNameAndCap(*options_);
}

bool ClaimCheckMiddleware::applies(const effects::EffectContext& ctx) const {
  if (ctx.transient || ctx.stepId.empty()) return false;  // nothing is journaled
  if (options_->effectIds && !options_->effectIds->count(ctx.effectId)) return false;
  if (options_->agentToolFramesOnly) {
    return ctx.taskKind == "tool" && effects::isAgentToolStepId(ctx.stepId);
  }
  return true;
}

json::value ClaimCheckMiddleware::invoke(const effects::EffectContext& ctx, json::value input,
                                         const effects::Next& next) {
  json::value result = next(ctx, std::move(input));
  if (!applies(ctx)) return result;
  if (!options_->envelopesAreData && content::looksLikeEnvelope(result)) return result;
  std::string text = json::toText(result);
  // D11 rule 1 comes first: a pass-through (media) must not carry a look-alike into the log.
  if (options_->envelopesAreData && text.find(kClaimCheckKey) != std::string::npos) {
    return offload(ctx, result, text);
  }
  if (options_->passThrough && options_->passThrough(ctx, result)) return result;
  if (static_cast<int64_t>(text.size()) <= options_->inlineCapBytes) return result;
  return offload(ctx, result, text);
}

json::value ClaimCheckMiddleware::offload(const effects::EffectContext& ctx,
                                          const json::value& result,
                                          const std::string& text) const {
  const ClaimCheckOptions& o = *options_;
  content::ClaimCheckEnvelope envelope;
  try {
    // The envelope goes into the step's journaled result: the store may write the blob with
    // the append that records it (ADR 0019).
    envelope.address = o.store->putDeferred(text, ctx.subject);
  } catch (const Error& e) {
    throw ContentStoreUnavailableError("the result of step '" + ctx.stepId + "' (effect '" +
                                       ctx.effectId + "', " + std::to_string(text.size()) +
                                       " bytes) could not be stored: " + e.what());
  }
  envelope.size = static_cast<int64_t>(text.size());
  std::vector<std::string> origins = effects::taintOrigins(result);
  if (auto it = o.digests.find(ctx.effectId); it != o.digests.end()) {
    envelope.digest = it->second(result, text);
  } else if (o.defaultDigest && origins.empty()) {
    envelope.digest = o.defaultDigest(result, text);  // never preview untrusted content
  }
  envelope.retain = o.retainFor ? o.retainFor(ctx.effectId) : o.retain;
  json::value recorded = content::toJson(envelope);
  // One wrapper (the walker looks through exactly one) naming every origin (D10).
  if (!origins.empty()) recorded = effects::tainted(std::move(recorded), origins);
  if (o.onOffload) {
    try {
      o.onOffload(OffloadInfo{ctx, envelope.address, envelope.size, recorded});
    } catch (const std::exception& e) {
      if (o.onWarn) {
        o.onWarn("claim-check onOffload hook threw for step '" + ctx.stepId + "' (effect '" +
                 ctx.effectId + "'): " + e.what() + "; the tool's result is kept");
      }
    }
  }
  return recorded;
}

std::shared_ptr<ClaimCheckMiddleware> claimCheckMiddleware(ClaimCheckOptions options) {
  return std::make_shared<ClaimCheckMiddleware>(
      std::make_shared<const ClaimCheckOptions>(std::move(options)));
}

AppStoreClaimCheck::AppStoreClaimCheck(ClaimCheckOptions options) : options_(std::move(options)) {
  if (options_.store) {
    throw ConfigError("this claim-check uses the app's content store (storage.contentStore); "
                      "leave its store unset, or build a claimCheckMiddleware with your store");
  }
  checkNameAndCap(options_);
}

std::string AppStoreClaimCheck::describe() const {
  return options_.name + "(claim-check, store = the app's content store, inlineCapBytes = " +
         std::to_string(options_.inlineCapBytes) + ")";
}

json::value AppStoreClaimCheck::invoke(const effects::EffectContext&, json::value,
                                       const effects::Next&) {
  throw FailedPreconditionError("claim-check '" + options_.name +
                                "' runs only in the chain of an App built from its config");
}

std::shared_ptr<ClaimCheckMiddleware> AppStoreClaimCheck::bind(
    std::shared_ptr<content::ContentStore> store,
    std::function<void(std::string_view)> onWarn) const {
  ClaimCheckOptions bound = options_;
  bound.store = std::move(store);
  if (!bound.onWarn) bound.onWarn = std::move(onWarn);
  return claimCheckMiddleware(std::move(bound));
}

}  // namespace loom::middleware
