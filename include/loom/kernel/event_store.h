// EventStore SPI: the append-only logs of executions, their metadata, and the control log.
//
// Contract common to every implementation (tests/conformance/event_store_conformance.cc):
// - Thread-safe: any method may be called from any thread concurrently.
// - Values are copied in and out: nothing a caller holds aliases the stored log (scan's
//   visitor gets a const reference, valid only during the call; it must not cast it away).
// - append is atomic: all the events are written, or none.
// - Events of one execution have seq 1, 2, 3, ... with no gap and no duplicate.
// - A row that cannot be read is a CorruptEventError naming execution id and seq. So is, for a
//   store whose rows can change outside Loom (a file, a server), a log that breaks the reading
//   rules of docs/spec/events.md: a missing row, a metadata row behind or ahead of its log, a
//   second STEP_COMPLETED for one step, a row whose checksum does not match its bytes.
// - Leases (lease.h, docs/spec/leases.md): acquisition, renewal and fencing are atomic with
//   respect to appends, across processes sharing the store; times are the store's clock.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loom/kernel/event.h"
#include "loom/kernel/execution_info.h"
#include "loom/kernel/lease.h"

namespace loom::kernel {

struct ExecutionFilter {
  std::optional<std::string> workflow;
  std::optional<std::string> subject;
  std::optional<ExecutionStatus> status;
  std::optional<int64_t> endedBeforeMillis;  // only ended executions that ended before this
  std::string afterId;                       // pagination: ids strictly greater than this
  std::size_t limit = 0;                     // 0 = no limit
};

class EventStore {
 public:
  virtual ~EventStore() = default;

  // Appends `events` to execution `executionId` at seq expectedNextSeq, expectedNextSeq+1, ...
  // (each event's seq is overwritten with its position). A new execution is created by an
  // append with expectedNextSeq == 1 whose first event is EXECUTION_STARTED.
  // Throws ConflictError, writing nothing, when the log's next seq is not expectedNextSeq (a
  // stale writer, or an execution that already exists); InvalidArgumentError when an event
  // lacks a required field or the execution does not start with EXECUTION_STARTED.
  // Returns the next seq after the append. Durable when it returns, as configured.
  virtual int64_t append(const std::string& executionId, int64_t expectedNextSeq,
                         std::vector<Event> events) = 0;

  // Calls `visit` for each event with seq >= fromSeq, in order. Streams: memory does not grow
  // with log length. An unknown execution visits nothing.
  virtual void scan(const std::string& executionId, int64_t fromSeq,
                    const std::function<void(const Event&)>& visit) const = 0;

  // All events with seq >= fromSeq (a convenience over scan).
  std::vector<Event> read(const std::string& executionId, int64_t fromSeq = 1) const;

  // Metadata of one execution; nullopt when it does not exist.
  virtual std::optional<ExecutionInfo> info(const std::string& executionId) const = 0;

  // Metadata of the executions matching `filter`, ordered by id.
  virtual std::vector<ExecutionInfo> list(const ExecutionFilter& filter) const = 0;

  // Deletes an execution's log and metadata (retention, erasure). Returns false when it did
  // not exist. A second call returns false and changes nothing.
  virtual bool remove(const std::string& executionId) = 0;

  // The control log: same append/scan contract, one log for the whole store; its first
  // event needs no particular type.
  virtual int64_t appendControl(int64_t expectedNextSeq, std::vector<ControlEvent> events) = 0;
  virtual std::vector<ControlEvent> readControl(int64_t fromSeq = 1) const = 0;
  // The seq of the last control event, 0 when there is none. Stores answer from their index
  // (a cost that does not grow with the log); the default reads the whole log.
  virtual int64_t lastControlSeq() const;
  // The control events whose type is one of `types`, seq >= fromSeq, in order; a row of those
  // types that does not read (corrupt), or one whose body is not JSON, throws as readControl
  // does (readControl alone checks every row). Stores answer from an index of types, so
  // the cost grows with the events returned, not with the log (which BLOB_READ events fill);
  // the default filters readControl.
  virtual std::vector<ControlEvent> readControlOfTypes(const std::vector<std::string>& types,
                                                       int64_t fromSeq = 1) const;

  // Leases. acquireLease takes the lease as LeaseRequest says, with a token greater than
  // every earlier token of the execution (which need not exist yet), and returns it; when a
  // live lease is held (by anyone, this owner included) and its token is not breakToken, it
  // throws LeaseHeldError carrying that lease and changes nothing. ttlMillis must be > 0.
  virtual Lease acquireLease(const LeaseRequest& request) = 0;
  // Extends `lease` to now + ttlMillis (a heartbeat) and returns it. Throws LeaseLostError
  // when lease.token (with its owner) is no longer the execution's current lease.
  virtual Lease renewLease(const Lease& lease, int64_t ttlMillis) = 0;
  // Releases `lease` if it is still current; otherwise does nothing. Its token stays used.
  // A store may release it already with the appendLeased that ends the execution (its status
  // becomes completed, failed or cancelled), in the same commit: the PostgreSQL store does,
  // on its one-statement path. A release after that does nothing, and a renewal or an append
  // under the lease is a LeaseLostError, as after any release.
  virtual void releaseLease(const Lease& lease) = 0;
  // The execution's current lease (it may be released or expired); nullopt: none recorded.
  // remove() forgets an execution's lease with its log.
  virtual std::optional<Lease> currentLease(const std::string& executionId) const = 0;
  // append, fenced: throws LeaseLostError, writing nothing, unless `lease` (token and owner)
  // is the current lease of lease.executionId; an expired lease nobody took over is still
  // current. Writers that do not run the execution (a signal) append without a lease.
  virtual int64_t appendLeased(const Lease& lease, int64_t expectedNextSeq,
                               std::vector<Event> events) = 0;

  // Claiming (docs/spec/leases.md, "Claiming"): takes for request.owner, until now +
  // request.ttlMillis, the leases of up to request.limit executions whose status is running
  // and that nobody runs by the store's clock (no lease: submitted; a released or an expired
  // one), skipping request.skip; returns them, oldest execution first. Two claimers never get
  // one execution: each lease is granted by acquireLease's rules. A shared store claims in one
  // statement, skipping rows another claimer is locking (FOR UPDATE SKIP LOCKED), so workers
  // split the work instead of waiting on each other. Not claimed here: runs whose owner died
  // on this host before its lease expired (ownerIsDeadHere proves that, in the caller) and
  // parked runs whose timer is due. With request.codeVersion, only runs that recorded that
  // code version or none (ExecutionInfo::codeVersion) are claimed: workers of two versions
  // share a home, each running its own version's runs. The default implementation lists and
  // acquires one by one.
  struct ClaimRequest {
    LeaseOwner owner;
    int64_t ttlMillis = 0;
    std::size_t limit = 1;
    std::vector<std::string> skip;
    std::optional<std::string> codeVersion;
  };
  virtual std::vector<Lease> claimRunnable(const ClaimRequest& request);

  // Waits up to timeoutMillis for news of work: true when the store heard that an execution
  // was submitted (started without a lease), or the lease of a run that has not ended was
  // released (a run parked or let go), by any process or machine since the last call; false when
  // the time passed. A worker calls it between claims instead of sleeping. The default (stores that
  // cannot notify) sleeps the timeout and returns false: the caller polls. A shared store listens
  // on a connection of its own (PostgreSQL: LISTEN/NOTIFY), so a submission on one machine wakes
  // workers on others.
  virtual bool awaitWork(int64_t timeoutMillis) const;

  // For erasure's owner-set check: the executions whose stored log may cite one of
  // `addresses` (its stored text holds one, or it is sealed and its text cannot be searched),
  // so the caller reads only those logs; every execution that cites one is in it. nullopt
  // (the default): the store cannot tell without reading every log, and the caller reads
  // them all. A shared store searches in the server (PostgreSQL: one scan of the events
  // table), sending back ids instead of every log.
  using AddressSet = std::set<std::string, std::less<>>;
  virtual std::optional<AddressSet> executionsThatMayCite(const AddressSet& addresses) const;

  // Worker presence (lease.h, docs/spec/leases.md "Workers"): records `presence` under its
  // owner id (replacing that owner's earlier word) until now + ttlMillis by the store's clock
  // (0: gone now), and forgets words that expired a day or more ago. InvalidArgumentError for
  // an empty owner id or a negative ttl.
  virtual void announceWorker(const WorkerPresence& presence, int64_t ttlMillis) = 0;
  // The workers whose word has not expired by the store's clock, by owner id. DataLossError
  // for a row that does not read.
  virtual std::vector<WorkerPresence> liveWorkers() const = 0;
};

// Appends `event` at the end of the control log, whatever other writers append meanwhile: on a
// ConflictError it reads the log's end again and retries (up to 100 times, then rethrows).
// Returns the seq it got.
int64_t appendControlAtEnd(EventStore& store, ControlEvent event);

// Calls `visit` with every execution matching `filter`, in id order, reading list() a page at
// a time (filter.limit executions per page, kDefaultPage when it is 0; filter.afterId is where
// it starts), so memory does not grow with the number of executions. Executions created
// during the walk may or may not be visited. Throws what list() and `visit` throw.
inline constexpr std::size_t kDefaultPage = 256;
void forEachExecution(const EventStore& store, ExecutionFilter filter,
                      const std::function<void(const ExecutionInfo&)>& visit);

// When a parked execution is due to go on: the "wakeAt" of its last event when that is an
// EXECUTION_PARKED with one (a durable timer, an approval with a timeout); nullopt otherwise
// (not parked, parked with no wake time, or a signal arrived after it). Reads one event.
std::optional<int64_t> timerWakeAt(const EventStore& store, const ExecutionInfo& info);

// Why a parked execution waits, from its last event when that is an EXECUTION_PARKED: its
// reason ("signal", "approval", "timer", "retrying", "effectStopped"), step, detail and wake
// time. nullopt when it is not parked (or a signal arrived after the park). Reads one event;
// throws SealedEventError when that event is sealed and the store cannot open it.
struct ParkState {
  std::string reason;
  std::string stepId;
  std::string detail;
  std::optional<int64_t> wakeAtMillis;  // a timer's, an approval deadline's or a retry's
  std::string waitingFor;               // the signal it waits for; empty when none

  // Waiting to run a step again (status "retrying"): a retryable failure under
  // execution.retry, or a result the content store could not take.
  bool awaitsRetry() const { return reason == "retrying" || reason == "contentStoreUnavailable"; }
};
std::optional<ParkState> currentPark(const EventStore& store, const ExecutionInfo& info);

}  // namespace loom::kernel
