#include "loom/content/content_store.h"

#include "loom/util/error.h"
#include "sha256.h"

namespace loom::content {

std::string ContentStore::putDeferred(std::string_view bytes,
                                      const std::optional<std::string>& subject) {
  return put(bytes, subject);
}

bool ContentStore::remove(std::string_view) {
  throw FailedPreconditionError("this content store cannot delete blobs (no remove capability)");
}

bool ContentStore::deleteIfUntouchedSince(std::string_view, int64_t) {
  throw FailedPreconditionError(
      "this content store has no deleteIfUntouchedSince (ContentStore SPI 1.3.0)");
}

int64_t ContentStore::touchClock() const {
  throw FailedPreconditionError("this content store has no touchClock (ContentStore SPI 1.3.0)");
}

void ContentStore::forEachBlob(const std::function<void(const BlobInfo&)>&) const {
  throw FailedPreconditionError("this content store cannot enumerate its blobs");
}

std::optional<BlobInfo> ContentStore::stat(std::string_view) const {
  throw FailedPreconditionError("this content store cannot enumerate its blobs");
}

std::string sha256Hex(std::string_view bytes) {
  const detail::Sha256::Digest digest = detail::sha256(bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * digest.size(), '0');
  for (std::size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}

bool isValidAddress(std::string_view address) {
  if (address.size() != 64) return false;
  for (char c : address) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

json::value contentRef(std::string_view address) {
  return json::object{{kContentRefKey, address}};
}

std::optional<std::string_view> refAddressView(const json::value& v) {
  const auto* o = v.if_object();
  if (o == nullptr || o->size() != 1) return std::nullopt;
  const auto* h = o->if_contains(kContentRefKey);
  if (h == nullptr || !h->is_string()) return std::nullopt;
  std::string_view address(h->get_string().data(), h->get_string().size());
  if (!isValidAddress(address)) return std::nullopt;
  return address;
}

std::optional<std::string> refAddress(const json::value& v) {
  auto address = refAddressView(v);
  return address ? std::optional<std::string>(*address) : std::nullopt;
}

}  // namespace loom::content
