// The lease rules every EventStore applies (one home; docs/spec/leases.md), over the lease a
// store has recorded for an execution (nullopt: none) and the store's time. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/kernel/lease.h"

namespace loom::kernel {

// The lease `request` gets over `current` at `nowMillis`: a token one past current's. Throws
// LeaseHeldError when current is live and its token is not request.breakToken, and
// InvalidArgumentError for a request without an execution id, owner id or a positive ttl.
Lease grantLease(const std::optional<Lease>& current, const LeaseRequest& request,
                 int64_t nowMillis);

// True when `lease` is `current`: same token and owner, not released.
bool isCurrentLease(const std::optional<Lease>& current, const Lease& lease);

// Throws LeaseLostError naming `doing` unless `lease` is `current` (same token and owner, not
// released).
void requireCurrentLease(const std::optional<Lease>& current, const Lease& lease,
                         const char* doing);

// Worker presence rows (EventStore::announceWorker): the checks every store makes first, and a
// version list as stored (a JSON array of strings). A stored list that is not one is a
// DataLossError naming the worker.
void validatePresence(const WorkerPresence& presence, int64_t ttlMillis);
std::string versionsText(const std::vector<std::string>& versions);
std::vector<std::string> versionsFromText(std::string_view text, const std::string& ownerId);
// How long a word that expired is kept before a store forgets it.
inline constexpr int64_t kForgetWorkersAfterMillis = 24 * 3600 * 1000;

// `current` renewed until now + ttlMillis (after requireCurrentLease).
Lease renewedLease(const std::optional<Lease>& current, const Lease& lease, int64_t ttlMillis,
                   int64_t nowMillis);

}  // namespace loom::kernel
