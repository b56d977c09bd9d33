// InterceptingContentStore: forwards every call (putDeferred included, told as a put) to a
// target store after telling onCall which kind of call it is (content_call.h); capabilities() is
// not a call to the store's data and is forwarded without it. CountingContentStore counts there;
// the tests' FaultyContentStore throws there. onCall runs before the target is reached, so a call
// that throws counts too and a refused call does nothing. Thread-safe as the target and onCall.
#pragma once

#include "content/content_call.h"
#include "loom/content/forwarding_content_store.h"

namespace loom::content {

class InterceptingContentStore : public ForwardingContentStore {
 public:
  using ForwardingContentStore::ForwardingContentStore;

  std::string put(std::string_view bytes,
                  const std::optional<std::string>& subject = std::nullopt) override {
    onCall(ContentCall::kPut);
    return ForwardingContentStore::put(bytes, subject);
  }
  std::string putDeferred(std::string_view bytes,
                          const std::optional<std::string>& subject = std::nullopt) override {
    onCall(ContentCall::kPut);  // a put, as far as counting and faults go
    return target().putDeferred(bytes, subject);
  }
  std::optional<std::string> get(
      std::string_view address,
      const std::optional<std::string>& subject = std::nullopt) const override {
    onCall(ContentCall::kGet);
    return ForwardingContentStore::get(address, subject);
  }
  bool has(std::string_view address) const override {
    onCall(ContentCall::kHas);
    return ForwardingContentStore::has(address);
  }
  bool remove(std::string_view address) override {
    onCall(ContentCall::kRemove);
    return ForwardingContentStore::remove(address);
  }
  bool deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) override {
    onCall(ContentCall::kDeleteIfUntouchedSince);
    return ForwardingContentStore::deleteIfUntouchedSince(address, cutoffMillis);
  }
  int64_t touchClock() const override {
    onCall(ContentCall::kTouchClock);
    return ForwardingContentStore::touchClock();
  }
  void forEachBlob(const std::function<void(const BlobInfo&)>& visit) const override {
    onCall(ContentCall::kForEachBlob);
    ForwardingContentStore::forEachBlob(visit);
  }
  std::optional<BlobInfo> stat(std::string_view address) const override {
    onCall(ContentCall::kStat);
    return ForwardingContentStore::stat(address);
  }

 protected:
  virtual void onCall(ContentCall kind) const = 0;
};

}  // namespace loom::content
