// Leases (docs/spec/leases.md): who runs an execution. Whoever runs an execution holds its
// lease and renews it before it expires; a second runner is refused before it runs anything
// (LeaseHeldError names the holder); a lease whose holder died expires and is taken over; an
// append under a lease that is no longer current (taken over, released) is refused
// (LeaseLostError), so a runner that was presumed dead records nothing.
//
// Every acquisition gets a fencing token greater than every earlier token of that execution.
// Times come from the store's clock (a server's for a shared store). Values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loom/util/error.h"

namespace loom::kernel {

// Who holds a lease: one runner (a process, or one runtime in it).
struct LeaseOwner {
  std::string id;      // unique per runner: never reused by another process
  std::string host;    // the machine's host name
  int64_t pid = 0;     // its process id on that host
  std::string bootId;  // the host's boot (Linux boot_id): a pid means nothing across boots
  // Where the pid means something: the pid namespace ("pid:[4026531836]") and the process's
  // start time (clock ticks since boot, /proc/<pid>/stat field 22), so neither another
  // container's pid nor a reused pid is taken for the owner.
  std::string pidNamespace;
  int64_t startTicks = 0;
};

struct Lease {
  std::string executionId;
  LeaseOwner owner;
  int64_t token = 0;  // the fencing token of this acquisition
  int64_t acquiredAtMillis = 0;
  int64_t renewedAtMillis = 0;  // the owner's last heartbeat
  int64_t expiresAtMillis = 0;
  bool released = false;  // its owner let it go (the run ended or parked)

  // True while it keeps every other runner out.
  bool liveAt(int64_t nowMillis) const { return !released && expiresAtMillis > nowMillis; }
};

// A lease request: acquireLease takes execution `executionId`'s lease for `owner` until
// now + ttlMillis when nobody holds it (never leased, released or expired), or when its
// current token is `breakToken` (the caller proved that holder dead: see ownerIsDeadHere).
struct LeaseRequest {
  std::string executionId;
  LeaseOwner owner;
  int64_t ttlMillis = 0;
  std::optional<int64_t> breakToken;
};

// A worker's word on the code it runs (docs/spec/leases.md, "Workers"), so `loom ls` can
// show the runs that no worker of their code version serves. Said again every few seconds
// while the worker runs; it counts until it expires (a worker that stops says it with a ttl of
// 0).
struct WorkerPresence {
  LeaseOwner owner;
  std::vector<std::string> runs;    // code versions of the runs it ran, sorted
  std::vector<std::string> leaves;  // code versions of the runs it left to their own, sorted
  int64_t seenAtMillis = 0;         // the store's clock, set by announceWorker
  int64_t expiresAtMillis = 0;
};

// A lease a claimer (`loom worker`) took for the runner it starts: that runner's acquisition
// breaks this token, taking the execution over at once instead of waiting for it to expire.
struct ClaimedLease {
  std::string executionId;
  int64_t token = 0;
  int64_t claimerPid = 0;  // the claimer's process: the runner's parent
};

// Another runner holds the lease: nothing was run or written. Carries the lease it found and
// the store's time when it looked, so the message says how long the lease still holds.
class LeaseHeldError : public FailedPreconditionError {
 public:
  LeaseHeldError(Lease held, int64_t nowMillis);
  const Lease& held() const { return held_; }

 private:
  Lease held_;
};

// An append or renewal under a lease that is no longer current: another runner took the
// execution over (or the lease was released). Nothing was written; the runner must stop.
class LeaseLostError : public ConflictError {
 public:
  using ConflictError::ConflictError;
};

// "process 4242 on host 'build-7' (lease renewed 2.1 s ago, expires in 12.9 s)".
std::string describeHolder(const Lease& lease, int64_t nowMillis);

// The owner this process presents: host name, pid, boot id and a random suffix.
LeaseOwner processLeaseOwner();

// True only when `owner` provably no longer runs: it ran on this host, in this boot and in
// this pid namespace, and its pid is gone, a zombie, or now a process started at another
// time. Another host, boot or namespace is never "dead" here: wait for the lease to expire.
bool ownerIsDeadHere(const LeaseOwner& owner);

// True when nobody runs an execution whose status is running: no lease, a released or expired
// one, or one whose owner is dead here. Such a run is orphaned: safe to resume.
bool isOrphaned(const std::optional<Lease>& lease, int64_t nowMillis);

}  // namespace loom::kernel
