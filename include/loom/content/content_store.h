// ContentStore SPI (version 1.6.0): content-addressed blobs. The address of a blob is the
// SHA-256 hex (64 lower-case digits) of its bytes, unless the store declares sealsContent, in
// which case it is a keyed hash under the owning subject's address key (ADR 0143). A reference
// to a blob inside a JSON value is the object {"__loomContent": "<address>"}.
//
// Contract common to every implementation (tests/conformance/content_store_conformance.cc):
// - Thread-safe: any method may be called from any thread concurrently; two processes may
//   share a persistent store.
// - put is idempotent: a put of bytes already stored returns the same address and *touches*
//   the blob (its last-touched time becomes touchClock()).
// - A blob is never visible half-written: after a crash at any point a get returns the whole
//   bytes or nothing.
// - get never returns bytes that do not match the address: a corrupt blob is DataLossError.
// - Optional capabilities are declared by capabilities(), never guessed: calling one a store
//   lacks throws FailedPreconditionError.
// - Every method that takes an address throws InvalidArgumentError for a malformed one.
//
// Versions: 1.0 put/get/has; 1.1 remove; 1.2 enumeration; 1.3.0 deleteIfUntouchedSince and
// touchClock; 1.5.0 the subject on put/get and sealsContent; 1.6.0 putDeferred.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "loom/json/json.h"

namespace loom::content {

inline constexpr std::string_view kContentStoreSpiVersion = "1.6.0";
inline constexpr std::string_view kContentRefKey = "__loomContent";

struct ContentCapabilities {
  bool remove = false;                  // remove(address)
  bool deleteIfUntouchedSince = false;  // conditional delete (SPI 1.3.0)
  bool touchClock = false;              // touchClock() (SPI 1.3.0)
  bool enumerate = false;               // forEachBlob
  bool sealsContent = false;            // blobs sealed under their subject's key (ADR 0143)
};

struct BlobInfo {
  std::string address;
  int64_t size = 0;              // stored bytes (sealed size for a sealing store)
  int64_t lastTouchedMillis = 0; // time of the last put of these bytes, on the touchClock
};

class ContentStore {
 public:
  virtual ~ContentStore() = default;

  virtual ContentCapabilities capabilities() const = 0;

  // Stores `bytes` (for `subject`, when the store is subject-aware; others ignore it) and
  // returns their address. Durable when it returns. Touches an existing blob.
  virtual std::string put(std::string_view bytes,
                          const std::optional<std::string>& subject = std::nullopt) = 0;

  // put, for bytes that an append to the event log will cite (an offloaded result, ADR 0019):
  // a store that writes beside the log (the home's packed blobs) may return before the blob is
  // written and write it in the commit of the log's next append, so the append that cites it
  // commits with it; until then only this process sees it (get, has, stat), and an append that
  // cites it fails with the write's error should the write fail. Every other store puts now (the
  // default). A wrapper that changes put must override this too, or it inherits the default,
  // which calls its put: ForwardingContentStore does not forward it.
  virtual std::string putDeferred(std::string_view bytes,
                                  const std::optional<std::string>& subject = std::nullopt);

  // The bytes at `address`; nullopt when there is no such blob. Throws DataLossError when the
  // stored bytes do not match the address (never returns them), InvalidArgumentError for a
  // malformed address.
  virtual std::optional<std::string> get(
      std::string_view address, const std::optional<std::string>& subject = std::nullopt) const = 0;

  virtual bool has(std::string_view address) const = 0;

  // Deletes the blob unconditionally; false when it did not exist. Needs capability remove.
  virtual bool remove(std::string_view address);

  // Deletes the blob only when it was not touched at or after `cutoffMillis` (so a put that
  // raced with the decision to delete spares it). True when it deleted. Atomic with respect
  // to concurrent puts. Needs capability deleteIfUntouchedSince.
  virtual bool deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis);

  // The store's notion of now for touches, in ms since the epoch; monotonic non-decreasing.
  // Needs capability touchClock.
  virtual int64_t touchClock() const;

  // Calls `visit` for every blob (order unspecified). Blobs put during the walk may or may
  // not be visited. `visit` may call any method of the store (the sweep deletes from inside
  // the walk). Needs capability enumerate.
  virtual void forEachBlob(const std::function<void(const BlobInfo&)>& visit) const;

  // Metadata of one blob; nullopt when absent. Needs capability enumerate.
  virtual std::optional<BlobInfo> stat(std::string_view address) const;
};

// SHA-256 of `bytes` as 64 lower-case hex digits (libsodium).
std::string sha256Hex(std::string_view bytes);
// True when `address` is 64 lower-case hex digits.
bool isValidAddress(std::string_view address);
// {"__loomContent": address}
json::value contentRef(std::string_view address);
// The address of a {"__loomContent": H} object (exactly that one member, H valid), else nullopt.
// The same as a view into `v` (valid while it lives), without allocating.
std::optional<std::string_view> refAddressView(const json::value& v);
std::optional<std::string> refAddress(const json::value& v);

}  // namespace loom::content
