// The simulator's store wrappers: a runner's log store (below its sealing layer, as stored)
// and its content store forward every call, and meet the simulator (an Interposer) before and
// after every write and before every read. There the simulator may crash the runner (from then
// on every call of its stores fails, as nothing of a dead process reaches a disk), fail one
// call as the disk would (ENOSPC, EIO), or run another actor's work at that very point (an
// erasure, a sweep, a second runner): deterministic interleavings on one thread. A put may also
// die inside itself, leaving its blob torn (a prefix) or lost. Lease
// renewals (the keeper's background thread) are not interposed, only refused once dead.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "loom/content/forwarding_content_store.h"
#include "loom/kernel/forwarding_event_store.h"

namespace loom::sim {

// One write a runner is about to make, or has made.
struct WriteSite {
  std::string_view call;               // "append", "appendControl", "acquireLease", "put", ...
  std::string executionId;             // the execution it writes for, when the call names one
  std::string_view bytes;              // a put's bytes
  std::optional<std::string> subject;  // a put's subject
};

class Interposer {
 public:
  virtual ~Interposer() = default;
  // May throw: a crash or a disk error (nothing written), after running other actors' work.
  virtual void beforeWrite(const WriteSite& site) = 0;
  // May throw: a crash after the write reached the store (the caller never hears of it).
  virtual void afterWrite(const WriteSite& site) = 0;
  // Throws once the runner died.
  virtual void beforeRead() const = 0;
  // A put stored `bytes` for `subject` at `address` (before afterWrite).
  virtual void stored(const std::optional<std::string>& subject, std::string_view bytes,
                      const std::string& address) = 0;
  // The put of a blob the store did not hold (`fresh`) reached the store and has not returned:
  // may throw, a crash inside the put, after tearing or losing what it wrote (world.cc). A
  // `deferred` put's row may be staged on the log's writer, not committed yet.
  virtual void landed(const std::string& address, std::string_view bytes, bool fresh,
                      bool deferred) = 0;
  // A remove or conditional delete deleted the blob at `address` (before afterWrite).
  virtual void deleted(std::string_view address) = 0;
};

namespace detail {
struct OwnedEventStore {
  std::unique_ptr<kernel::EventStore> owned;
};
}  // namespace detail

class SimEventStore : private detail::OwnedEventStore, public kernel::ForwardingEventStore {
 public:
  SimEventStore(std::unique_ptr<kernel::EventStore> inner, Interposer& at);

  int64_t append(const std::string& executionId, int64_t expectedNextSeq,
                 std::vector<kernel::Event> events) override;
  int64_t appendLeased(const kernel::Lease& lease, int64_t expectedNextSeq,
                       std::vector<kernel::Event> events) override;
  int64_t appendControl(int64_t expectedNextSeq, std::vector<kernel::ControlEvent> events) override;
  bool remove(const std::string& executionId) override;
  kernel::Lease acquireLease(const kernel::LeaseRequest& request) override;
  kernel::Lease renewLease(const kernel::Lease& lease, int64_t ttlMillis) override;
  void releaseLease(const kernel::Lease& lease) override;

  void scan(const std::string& executionId, int64_t fromSeq,
            const std::function<void(const kernel::Event&)>& visit) const override;
  std::optional<kernel::ExecutionInfo> info(const std::string& executionId) const override;
  std::vector<kernel::ExecutionInfo> list(const kernel::ExecutionFilter& filter) const override;
  std::vector<kernel::ControlEvent> readControl(int64_t fromSeq = 1) const override;
  int64_t lastControlSeq() const override;
  std::vector<kernel::ControlEvent> readControlOfTypes(const std::vector<std::string>& types,
                                                       int64_t fromSeq = 1) const override;
  std::optional<kernel::Lease> currentLease(const std::string& executionId) const override;

  // The runner's process died: what an embedded log staged and has not committed is dropped
  // (SqliteEventStore::dropStagedWrites), not committed when the app is destroyed.
  void dropStagedWrites();

 private:
  Interposer& at_;
};

class SimContentStore : public content::ForwardingContentStore {
 public:
  SimContentStore(std::shared_ptr<content::ContentStore> inner, Interposer& at);

  std::string put(std::string_view bytes,
                  const std::optional<std::string>& subject = std::nullopt) override;
  std::string putDeferred(std::string_view bytes,
                          const std::optional<std::string>& subject = std::nullopt) override;
  bool remove(std::string_view address) override;
  bool deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) override;
  std::optional<std::string> get(
      std::string_view address,
      const std::optional<std::string>& subject = std::nullopt) const override;
  bool has(std::string_view address) const override;

 private:
  std::string putThrough(std::string_view bytes, const std::optional<std::string>& subject,
                         bool deferred);

  std::shared_ptr<content::ContentStore> inner_;
  Interposer& at_;
};

}  // namespace loom::sim
