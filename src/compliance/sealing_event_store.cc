#include "compliance/sealing_event_store.h"

#include "loom/util/error.h"
#include "sweep/content_walker.h"

namespace loom::compliance {

SealingEventStore::SealingEventStore(kernel::EventStore& inner, KeyStore& keys,
                                     SealingOptions options)
    : ForwardingEventStore(inner), keys_(keys), options_(options) {}

int64_t SealingEventStore::append(const std::string& executionId, int64_t expectedNextSeq,
                                  std::vector<kernel::Event> events) {
  return appendSealed(executionId, expectedNextSeq, std::move(events),
                      [&](std::vector<kernel::Event> sealed) {
                        return target().append(executionId, expectedNextSeq, std::move(sealed));
                      });
}

int64_t SealingEventStore::appendLeased(const kernel::Lease& lease, int64_t expectedNextSeq,
                                        std::vector<kernel::Event> events) {
  return appendSealed(lease.executionId, expectedNextSeq, std::move(events),
                      [&](std::vector<kernel::Event> sealed) {
                        return target().appendLeased(lease, expectedNextSeq, std::move(sealed));
                      });
}

int64_t SealingEventStore::appendSealed(const std::string& executionId, int64_t expectedNextSeq,
                                        std::vector<kernel::Event> events,
                                        FunctionRef<int64_t(std::vector<kernel::Event>)> write) {
  if (events.empty()) return write(std::move(events));
  for (const auto& e : events) {
    if (kernel::isSealed(e.data) || kernel::isErased(e.data)) {
      throw InvalidArgumentError("event " + std::string(kernel::eventTypeName(e.type)) + " for '" +
                                 executionId +
                                 "' has a sealed or erased payload; only the sealing store "
                                 "writes those");
    }
  }
  std::optional<Sealing> sealing = remembered(executionId, expectedNextSeq);
  // Keys go only by a shred: the cheap tombstone check first, the key lookup only after one.
  if (sealing && sealing->sealer && keys_.wasShredded(*sealing->sealer) &&
      !keys_.find(*sealing->sealer, sealing->key->id())) {
    forget(executionId);  // erased while this run was under way
    throw erasedDuringRun(executionId, *sealing->sealer);
  }
  if (!sealing) {
    std::optional<std::string> subject;
    if (expectedNextSeq == 1 && events.front().type == kernel::EventType::kExecutionStarted) {
      if (const auto* s = events.front().data.if_contains("subject"); s && s->is_string()) {
        subject = std::string(s->get_string());
      }
    } else if (auto info = target().info(executionId)) {
      subject = info->subject;
    } else {
      // No such execution: the inner store refuses the append with the error it names.
      return write(std::move(events));
    }
    sealing.emplace();
    sealing->sealer = sealingSubject(subject, options_);
    if (sealing->sealer && expectedNextSeq > 1 && keys_.wasShredded(*sealing->sealer)) {
      refuseIfErased(executionId, *sealing->sealer);
    }
    if (sealing->sealer) sealing->key = keys_.getOrCreate(*sealing->sealer);
  }
  const bool ends = events.back().type == kernel::EventType::kExecutionCompleted ||
                    events.back().type == kernel::EventType::kExecutionFailed ||
                    events.back().type == kernel::EventType::kExecutionCancelled;
  if (sealing->sealer) {
    int64_t seq = expectedNextSeq;
    for (auto& e : events) {
      // Checked in clear first: once sealed, a missing field could no longer be named.
      try {
        kernel::validateEventData(e.type, e.data);
      } catch (const InvalidArgumentError& err) {
        throw InvalidArgumentError("event " + std::string(kernel::eventTypeName(e.type)) +
                                   " for '" + executionId + "': " + err.what());
      }
      e.seq = seq++;
      e = sealEvent(executionId, std::move(e), *sealing->sealer, *sealing->key);
    }
  }
  int64_t next = 0;
  try {
    next = write(std::move(events));
  } catch (...) {
    forget(executionId);  // another writer, or a bad request: look the execution up again
    throw;
  }
  if (ends) {
    forget(executionId);
  } else {
    sealing->nextSeq = next;
    remember(executionId, std::move(*sealing));
  }
  return next;
}

namespace {

struct FirstEventSeen {};

}  // namespace

FailedPreconditionError SealingEventStore::erasedDuringRun(const std::string& executionId,
                                                           const std::string& subject) {
  return FailedPreconditionError("subject '" + subject + "' was erased while execution '" +
                                 executionId +
                                 "' ran: nothing more is recorded for it (its events read as "
                                 "erased); start a new run if the subject comes back");
}

void SealingEventStore::refuseIfErased(const std::string& executionId,
                                       const std::string& subject) const {
  std::optional<std::string> keyId;
  try {
    target().scan(executionId, 1, [&](const kernel::Event& e) {
      if (kernel::isSealed(e.data)) {
        const auto* id = e.data.at(kernel::kSealedKey).get_object().if_contains("keyId");
        if (id != nullptr && id->is_string()) keyId = std::string(id->get_string());
      }
      throw FirstEventSeen{};
    });
  } catch (const FirstEventSeen&) {
    // only the first event is needed
  }
  if (keyId && !keys_.find(subject, *keyId)) throw erasedDuringRun(executionId, subject);
}

std::optional<SealingEventStore::Sealing> SealingEventStore::remembered(
    const std::string& executionId, int64_t expectedNextSeq) {
  std::lock_guard lock(mu_);
  auto it = sealings_.find(executionId);
  if (it == sealings_.end() || it->second.nextSeq != expectedNextSeq) return std::nullopt;
  return it->second;
}

void SealingEventStore::remember(const std::string& executionId, Sealing sealing) {
  std::lock_guard lock(mu_);
  if (sealings_.size() >= kMaxRemembered && !sealings_.contains(executionId)) sealings_.clear();
  sealings_.insert_or_assign(executionId, std::move(sealing));
}

void SealingEventStore::forget(const std::string& executionId) {
  std::lock_guard lock(mu_);
  sealings_.erase(executionId);
}

void SealingEventStore::scan(const std::string& executionId, int64_t fromSeq,
                             const std::function<void(const kernel::Event&)>& visit) const {
  EventUnsealer unsealer(keys_);  // one per scan: keys cached for this read only
  target().scan(executionId, fromSeq, [&](const kernel::Event& e) {
    if (!kernel::isSealed(e.data)) {
      visit(e);
      return;
    }
    visit(unsealer.unseal(executionId, e));
  });
}

bool SealingEventStore::remove(const std::string& executionId) {
  forget(executionId);
  return target().remove(executionId);
}

sweep::PinSource sealedArchivePins(const sweep::Archive& archive, const KeyStore& keys) {
  return sweep::PinSource{
      "archive", [&archive, &keys](const sweep::AddressVisitor& visit) {
        EventUnsealer unsealer(keys);
        archive.forEachEvent([&](const std::string& id, const kernel::Event& e) {
          sweep::visitCitedAddresses(unsealer.unseal(id, e), visit);
        });
      }};
}

}  // namespace loom::compliance
