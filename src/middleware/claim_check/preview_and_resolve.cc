#include "content/claim_check_envelope.h"
#include "loom/content/content_store.h"
#include "loom/effects/taint.h"
#include "loom/middleware/claim_check/claim_check.h"
#include "loom/util/error.h"

namespace loom::middleware {
namespace {

// Byte length of the first `maxChars` code points of UTF-8 `text`.
std::size_t prefixBytes(std::string_view text, int64_t maxChars) {
  std::size_t i = 0;
  for (int64_t chars = 0; i < text.size() && chars < maxChars; ++chars) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80           ? 1
                      : (c >> 5) == 0x6  ? 2
                      : (c >> 4) == 0xE  ? 3
                      : (c >> 3) == 0x1E ? 4
                                         : 1;
    i = std::min(text.size(), i + len);
  }
  return i;
}

}  // namespace

json::value PreviewDigest::toJson() const {
  json::object digest{{"preview", preview}};
  if (truncated) digest["truncated"] = true;
  return digest;
}

std::optional<PreviewDigest> PreviewDigest::from(const json::value& digest) {
  const auto* o = digest.if_object();
  const auto* preview = o ? o->if_contains("preview") : nullptr;
  if (preview == nullptr || !preview->is_string()) return std::nullopt;
  const auto* truncated = o->if_contains("truncated");
  if (o->size() != (truncated ? 2u : 1u)) return std::nullopt;
  if (truncated && !(truncated->is_bool() && truncated->get_bool())) return std::nullopt;
  return PreviewDigest{std::string(preview->get_string()), truncated != nullptr};
}

json::value previewOf(std::string_view text, int64_t maxChars) {
  std::size_t n = prefixBytes(text, maxChars);
  return PreviewDigest{std::string(text.substr(0, n)), n < text.size()}.toJson();
}

DigestFn previewDigest(int64_t maxChars) {
  if (maxChars < 0) throw ConfigError("previewDigest maxChars must be >= 0");
  return
      [maxChars](const json::value&, std::string_view text) { return previewOf(text, maxChars); };
}

std::optional<json::value> resolveClaimCheck(const content::ContentStore& store,
                                             const json::value& envelope,
                                             const std::optional<std::string>& subject) {
  if (effects::isTainted(envelope)) {
    // The blob holds the original result, taint markers included.
    return resolveClaimCheck(store, effects::untainted(envelope), subject);
  }
  auto parsed = content::parseEnvelope(envelope);
  if (!parsed) throw InvalidArgumentError("resolveClaimCheck: not a claim-check envelope");
  auto bytes = store.get(parsed->address, subject);
  if (!bytes) return std::nullopt;
  if (static_cast<int64_t>(bytes->size()) != parsed->size) {
    throw DataLossError("blob " + parsed->address + " has " + std::to_string(bytes->size()) +
                        " bytes but its envelope says " + std::to_string(parsed->size));
  }
  try {
    return json::parse(*bytes, "blob " + parsed->address);
  } catch (const InvalidArgumentError& e) {
    throw DataLossError(e.what());
  }
}

}  // namespace loom::middleware
