// claimCheckMiddleware (ADR 0054): moves an effect result whose JSON text is over a cap into
// a content store and returns a claim-check envelope in its place, so the log records the
// envelope. A result with a taint marker (at the top or nested) is recorded as
// tainted(envelope, origins): one wrapper naming every origin the result carries (ADR 0140
// D10), and it is never given the default preview (D3).
// Also: previewDigest (the default digest of the agent opt-in) and resolveClaimCheck.
// Thread-safe: options are immutable; the store must be thread-safe.
#pragma once

#include <memory>
#include <optional>

#include "loom/effects/middleware.h"
#include "loom/middleware/claim_check/claim_check_options.h"

namespace loom::middleware {

class ClaimCheckMiddleware : public effects::Middleware {
 public:
  // Throws ConfigError when options lack a store or a name, or the cap is negative.
  explicit ClaimCheckMiddleware(std::shared_ptr<const ClaimCheckOptions> options);
  std::string_view name() const override { return options_->name; }
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override;
  const ClaimCheckOptions& options() const { return *options_; }

 private:
  bool applies(const effects::EffectContext& ctx) const;
  json::value offload(const effects::EffectContext& ctx, const json::value& result,
                      const std::string& text) const;
  std::shared_ptr<const ClaimCheckOptions> options_;
};

std::shared_ptr<ClaimCheckMiddleware> claimCheckMiddleware(ClaimCheckOptions options);

// A claimCheckMiddleware for execution.effectMiddleware whose store is the app's own content
// store (storage.contentStore, sealed when storage.contentStore.sealed: the store the sweep,
// erasure and export read). A config is shared by the apps built from it, so this entry is a
// recipe: each App binds a fresh ClaimCheckMiddleware to its store at boot (boot.cc), and the
// entry itself refuses to run. options.store must be unset; onWarn defaults to the app's
// observability.onWarn. The Node.js package's claimCheckMiddleware() builds one.
class AppStoreClaimCheck : public effects::Middleware {
 public:
  // Throws ConfigError as ClaimCheckMiddleware does, and when options.store is set.
  explicit AppStoreClaimCheck(ClaimCheckOptions options);
  std::string_view name() const override { return options_.name; }
  std::string describe() const override;
  // Throws FailedPreconditionError: only the middleware an App bound runs.
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override;
  std::shared_ptr<ClaimCheckMiddleware> bind(std::shared_ptr<content::ContentStore> store,
                                             std::function<void(std::string_view)> onWarn) const;

 private:
  ClaimCheckOptions options_;
};

// PreviewDigest: {"preview": <the first maxChars characters of the JSON text>,
// "truncated": true} — `truncated` absent when the preview is the whole text. Characters are
// Unicode code points: a UTF-8 sequence is never split.
struct PreviewDigest {
  std::string preview;
  bool truncated = false;  // PreviewDigest.truncated: the preview is a head, not the whole
  json::value toJson() const;
  // Reads a recorded preview digest; nullopt when `digest` is not one.
  static std::optional<PreviewDigest> from(const json::value& digest);
};
DigestFn previewDigest(int64_t maxChars);
json::value previewOf(std::string_view text, int64_t maxChars);

// The original value of an envelope, or of a taint-wrapped envelope (the blob holds the
// original result with its taint markers); nullopt when the blob is gone (reclaimed or
// erased). Throws
// InvalidArgumentError when `envelope` is not an envelope, DataLossError when the blob's
// text is not JSON or its size differs from the envelope's.
std::optional<json::value> resolveClaimCheck(const content::ContentStore& store,
                                             const json::value& envelope,
                                             const std::optional<std::string>& subject = {});

}  // namespace loom::middleware
