// ForwardingContentStore: a ContentStore that forwards every call (capabilities included) to a
// target store, for wrappers (encrypting, counting, fault injection, masking) to derive from
// and override only what they change. putDeferred is not forwarded: a wrapper gets the
// default (its own put) unless it overrides putDeferred too, so a wrapper that changes put (a
// ledger, encryption) never lets a deferred put bypass it. The target must outlive the wrapper;
// thread-safe as the target.
#pragma once

#include "loom/content/content_store.h"

namespace loom::content {

class ForwardingContentStore : public ContentStore {
 public:
  explicit ForwardingContentStore(ContentStore& target) : target_(target) {}

  ContentCapabilities capabilities() const override { return target_.capabilities(); }
  std::string put(std::string_view bytes,
                  const std::optional<std::string>& subject = std::nullopt) override {
    return target_.put(bytes, subject);
  }
  std::optional<std::string> get(
      std::string_view address,
      const std::optional<std::string>& subject = std::nullopt) const override {
    return target_.get(address, subject);
  }
  bool has(std::string_view address) const override { return target_.has(address); }
  bool remove(std::string_view address) override { return target_.remove(address); }
  bool deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) override {
    return target_.deleteIfUntouchedSince(address, cutoffMillis);
  }
  int64_t touchClock() const override { return target_.touchClock(); }
  void forEachBlob(const std::function<void(const BlobInfo&)>& visit) const override {
    target_.forEachBlob(visit);
  }
  std::optional<BlobInfo> stat(std::string_view address) const override {
    return target_.stat(address);
  }

 protected:
  ContentStore& target() const { return target_; }

 private:
  ContentStore& target_;
};

}  // namespace loom::content
