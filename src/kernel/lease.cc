#include "loom/kernel/lease.h"

#include <signal.h>
#include <sodium.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "lease_rules.h"
#include "util/host.h"

namespace loom::kernel {
namespace {

std::string seconds(int64_t millis) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(millis) / 1000.0);
  return buf;
}

std::string bootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

std::string randomSuffix() {
  unsigned char bytes[6];
  randombytes_buf(bytes, sizeof bytes);
  char hex[2 * sizeof bytes + 1];
  sodium_bin2hex(hex, sizeof hex, bytes, sizeof bytes);
  return hex;
}

// The fields of /proc/<pid>/stat after the command name: [0] is the state (field 3), [19]
// the start time (field 22). Empty when the process does not exist.
std::vector<std::string> procStat(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(stat.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

int64_t startTicksOf(int64_t pid) {
  auto fields = procStat(pid);
  return fields.size() > 19 ? std::strtoll(fields[19].c_str(), nullptr, 10) : 0;
}

std::string pidNamespace() {
  std::error_code ec;
  auto ns = std::filesystem::read_symlink("/proc/self/ns/pid", ec);
  return ec ? std::string() : ns.string();
}

std::string leaseLostMessage(const Lease& lease, const char* doing,
                             const std::optional<Lease>& current) {
  std::string m = "execution '" + lease.executionId + "': cannot " + doing + ": its lease (token " +
                  std::to_string(lease.token) + ") is no longer this runner's; ";
  if (!current) {
    m += "the execution holds no lease any more (removed)";
  } else if (current->token != lease.token || current->owner.id != lease.owner.id) {
    m += "process " + std::to_string(current->owner.pid) + " on host '" + current->owner.host +
         "' took it over (token " + std::to_string(current->token) + ")";
  } else {
    m += "it was released";
  }
  return m + ". Nothing was written; this runner stops (see `loom ls`)";
}

}  // namespace

LeaseHeldError::LeaseHeldError(Lease held, int64_t nowMillis)
    : FailedPreconditionError(
          "execution '" + held.executionId + "' is being run by " +
          describeHolder(held, nowMillis) +
          "; nothing was run. Wait for that run to end (`loom ls` shows it), or stop that "
          "process: once its lease expires, `loom resume " +
          held.executionId + "` takes the execution over"),
      held_(std::move(held)) {}

std::string describeHolder(const Lease& lease, int64_t nowMillis) {
  return "process " + std::to_string(lease.owner.pid) + " on host '" + lease.owner.host +
         "' (lease renewed " + seconds(nowMillis - lease.renewedAtMillis) + " ago, expires in " +
         seconds(lease.expiresAtMillis - nowMillis) + ")";
}

LeaseOwner processLeaseOwner() {
  static std::mutex mu;
  static LeaseOwner owner;
  std::lock_guard lock(mu);
  if (owner.pid != ::getpid()) {  // first use, or a forked child: never the parent's identity
    owner.host = hostName();
    owner.pid = ::getpid();
    owner.bootId = bootId();
    owner.pidNamespace = pidNamespace();
    owner.startTicks = startTicksOf(owner.pid);
    owner.id = owner.host + ":" + std::to_string(owner.pid) + ":" + randomSuffix();
  }
  return owner;
}

bool ownerIsDeadHere(const LeaseOwner& owner) {
  if (owner.pid <= 0 || owner.bootId.empty() || owner.pidNamespace.empty() ||
      owner.pid == ::getpid()) {
    return false;
  }
  LeaseOwner self = processLeaseOwner();
  if (owner.host != self.host || owner.bootId != self.bootId ||
      owner.pidNamespace != self.pidNamespace) {
    return false;
  }
  if (::kill(static_cast<pid_t>(owner.pid), 0) == -1) return errno == ESRCH;
  auto stat = procStat(owner.pid);
  if (stat.empty()) return false;                     // cannot tell: wait for expiry
  if (stat[0] == "Z") return true;                    // exited, not yet reaped by its parent
  return owner.startTicks > 0 && stat.size() > 19 &&  // the pid was reused
         std::strtoll(stat[19].c_str(), nullptr, 10) != owner.startTicks;
}

bool isOrphaned(const std::optional<Lease>& lease, int64_t nowMillis) {
  return !lease || !lease->liveAt(nowMillis) || ownerIsDeadHere(lease->owner);
}

Lease grantLease(const std::optional<Lease>& current, const LeaseRequest& request,
                 int64_t nowMillis) {
  if (request.executionId.empty()) throw InvalidArgumentError("a lease needs an execution id");
  if (request.owner.id.empty()) {
    throw InvalidArgumentError("the lease of execution '" + request.executionId +
                               "' needs an owner id");
  }
  if (request.ttlMillis <= 0) {
    throw InvalidArgumentError("the lease of execution '" + request.executionId +
                               "' needs a positive ttl, not " + std::to_string(request.ttlMillis) +
                               " ms");
  }
  if (current && current->liveAt(nowMillis) && request.breakToken != current->token) {
    throw LeaseHeldError(*current, nowMillis);
  }
  Lease lease;
  lease.executionId = request.executionId;
  lease.owner = request.owner;
  lease.token = current ? current->token + 1 : 1;
  lease.acquiredAtMillis = nowMillis;
  lease.renewedAtMillis = nowMillis;
  lease.expiresAtMillis = nowMillis + request.ttlMillis;
  return lease;
}

bool isCurrentLease(const std::optional<Lease>& current, const Lease& lease) {
  return current && current->token == lease.token && current->owner.id == lease.owner.id &&
         !current->released;
}

void requireCurrentLease(const std::optional<Lease>& current, const Lease& lease,
                         const char* doing) {
  if (!isCurrentLease(current, lease)) {
    throw LeaseLostError(leaseLostMessage(lease, doing, current));
  }
}

Lease renewedLease(const std::optional<Lease>& current, const Lease& lease, int64_t ttlMillis,
                   int64_t nowMillis) {
  requireCurrentLease(current, lease, "renew its lease");
  if (ttlMillis <= 0) {
    throw InvalidArgumentError("the lease of execution '" + lease.executionId +
                               "' needs a positive ttl, not " + std::to_string(ttlMillis) + " ms");
  }
  Lease renewed = *current;
  renewed.renewedAtMillis = nowMillis;
  renewed.expiresAtMillis = nowMillis + ttlMillis;
  return renewed;
}

}  // namespace loom::kernel
