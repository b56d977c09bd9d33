#include "fault_stores.h"

#include "loom/kernel/sqlite_event_store.h"

namespace loom::sim {
namespace {

// Runs `call` between the interposer's before and after hooks.
template <typename Call>
auto interposed(Interposer& at, const WriteSite& site, Call&& call) {
  at.beforeWrite(site);
  if constexpr (std::is_void_v<decltype(call())>) {
    call();
    at.afterWrite(site);
  } else {
    auto result = call();
    at.afterWrite(site);
    return result;
  }
}

}  // namespace

SimEventStore::SimEventStore(std::unique_ptr<kernel::EventStore> inner, Interposer& at)
    : OwnedEventStore{std::move(inner)}, ForwardingEventStore(*owned), at_(at) {}

void SimEventStore::dropStagedWrites() {
  if (auto* log = dynamic_cast<kernel::SqliteEventStore*>(owned.get())) log->dropStagedWrites();
}

int64_t SimEventStore::append(const std::string& executionId, int64_t expectedNextSeq,
                              std::vector<kernel::Event> events) {
  return interposed(at_, {"append", executionId}, [&] {
    return ForwardingEventStore::append(executionId, expectedNextSeq, std::move(events));
  });
}

int64_t SimEventStore::appendLeased(const kernel::Lease& lease, int64_t expectedNextSeq,
                                    std::vector<kernel::Event> events) {
  return interposed(at_, {"append", lease.executionId}, [&] {
    return ForwardingEventStore::appendLeased(lease, expectedNextSeq, std::move(events));
  });
}

int64_t SimEventStore::appendControl(int64_t expectedNextSeq,
                                     std::vector<kernel::ControlEvent> events) {
  return interposed(at_, {"appendControl", ""}, [&] {
    return ForwardingEventStore::appendControl(expectedNextSeq, std::move(events));
  });
}

bool SimEventStore::remove(const std::string& executionId) {
  return interposed(at_, {"remove", executionId},
                    [&] { return ForwardingEventStore::remove(executionId); });
}

kernel::Lease SimEventStore::acquireLease(const kernel::LeaseRequest& request) {
  return interposed(at_, {"acquireLease", request.executionId},
                    [&] { return ForwardingEventStore::acquireLease(request); });
}

kernel::Lease SimEventStore::renewLease(const kernel::Lease& lease, int64_t ttlMillis) {
  at_.beforeRead();
  return ForwardingEventStore::renewLease(lease, ttlMillis);
}

void SimEventStore::releaseLease(const kernel::Lease& lease) {
  interposed(at_, {"releaseLease", lease.executionId},
             [&] { ForwardingEventStore::releaseLease(lease); });
}

void SimEventStore::scan(const std::string& executionId, int64_t fromSeq,
                         const std::function<void(const kernel::Event&)>& visit) const {
  at_.beforeRead();
  ForwardingEventStore::scan(executionId, fromSeq, visit);
}

std::optional<kernel::ExecutionInfo> SimEventStore::info(const std::string& executionId) const {
  at_.beforeRead();
  return ForwardingEventStore::info(executionId);
}

std::vector<kernel::ExecutionInfo> SimEventStore::list(const kernel::ExecutionFilter& f) const {
  at_.beforeRead();
  return ForwardingEventStore::list(f);
}

std::vector<kernel::ControlEvent> SimEventStore::readControl(int64_t fromSeq) const {
  at_.beforeRead();
  return ForwardingEventStore::readControl(fromSeq);
}

int64_t SimEventStore::lastControlSeq() const {
  at_.beforeRead();
  return ForwardingEventStore::lastControlSeq();
}

std::vector<kernel::ControlEvent> SimEventStore::readControlOfTypes(
    const std::vector<std::string>& types, int64_t fromSeq) const {
  at_.beforeRead();
  return ForwardingEventStore::readControlOfTypes(types, fromSeq);
}

std::optional<kernel::Lease> SimEventStore::currentLease(const std::string& executionId) const {
  at_.beforeRead();
  return ForwardingEventStore::currentLease(executionId);
}

SimContentStore::SimContentStore(std::shared_ptr<content::ContentStore> inner, Interposer& at)
    : ForwardingContentStore(*inner), inner_(std::move(inner)), at_(at) {}

std::string SimContentStore::put(std::string_view bytes,
                                 const std::optional<std::string>& subject) {
  return putThrough(bytes, subject, false);
}

std::string SimContentStore::putDeferred(std::string_view bytes,
                                         const std::optional<std::string>& subject) {
  return putThrough(bytes, subject, true);
}

std::string SimContentStore::putThrough(std::string_view bytes,
                                        const std::optional<std::string>& subject, bool deferred) {
  return interposed(at_, {.call = "put", .bytes = bytes, .subject = subject}, [&] {
    bool fresh = !ForwardingContentStore::has(content::sha256Hex(bytes));
    // Deferred (ADR 0019, claim-check's puts on the embedded home without keys): the row is
    // staged, written with the runner's next append; a crash inside the put drops it.
    std::string address = deferred ? target().putDeferred(bytes, subject)
                                   : ForwardingContentStore::put(bytes, subject);
    at_.stored(subject, bytes, address);  // before a crash inside it: its ledger row is written
    at_.landed(address, bytes, fresh, deferred);
    return address;
  });
}

bool SimContentStore::remove(std::string_view address) {
  return interposed(at_, {"remove", ""}, [&] {
    bool gone = ForwardingContentStore::remove(address);
    if (gone) at_.deleted(address);
    return gone;
  });
}

bool SimContentStore::deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) {
  return interposed(at_, {"deleteIfUntouchedSince", ""}, [&] {
    bool gone = ForwardingContentStore::deleteIfUntouchedSince(address, cutoffMillis);
    if (gone) at_.deleted(address);
    return gone;
  });
}

std::optional<std::string> SimContentStore::get(std::string_view address,
                                                const std::optional<std::string>& subject) const {
  at_.beforeRead();
  return ForwardingContentStore::get(address, subject);
}

bool SimContentStore::has(std::string_view address) const {
  at_.beforeRead();
  return ForwardingContentStore::has(address);
}

}  // namespace loom::sim
