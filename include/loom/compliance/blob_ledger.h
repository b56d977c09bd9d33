// The blob ledger: which subject put which blob, recorded BEFORE the blob is stored (for a
// store whose address is the plain hash) in loom.db (table subject_blobs). Erasure reads it
// after its touch cutoff, so it sees every put that could be spared by no conditional delete:
// - a blob another subject put (or a run with no subject) is never deleted, even when that
//   run's envelope is not journaled yet (an erase racing a concurrent identical put);
// - a blob the erased subject put is deleted, even when its envelope can no longer be read (a
//   run still in flight when the key was shredded: a repeated erase deletes what it wrote).
// LedgeredContentStore is the ContentStore wrapper that writes the ledger on every put.
// The rows live in the home's SQLite database (BlobLedger(path)) or on a shared server
// (BlobLedgerRows: postgres::PostgresBlobLedgerRows). Thread-safety: thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "loom/content/forwarding_content_store.h"

namespace loom::compliance {

// Where the ledger keeps its rows, subject_blobs(subject, address, put_at): one per subject
// and address, put_at the time of the subject's last put of it on the store's clock (the
// server's for a shared one, so it compares with the key store's shred times). The empty
// subject stands for runs without one. Thread-safe.
class BlobLedgerRows {
 public:
  virtual ~BlobLedgerRows() = default;
  // Inserts the row or refreshes its put_at to now. Visible to every other connection when it
  // returns.
  virtual void add(const std::string& subject, std::string_view address) = 0;
  // Addresses `subject` put.
  virtual std::set<std::string, std::less<>> addressesOf(const std::string& subject) const = 0;
  // Calls `visit(address, subject, putAtMillis)` for every row of another subject whose
  // address is one of `addresses` (an erasure asks about the erased subject's blobs only, so
  // the work grows with them, not with the whole table).
  virtual void forEachOtherPut(
      const std::string& subject, const std::vector<std::string>& addresses,
      const std::function<void(std::string_view, std::string_view, int64_t)>& visit) const = 0;
  // Deletes the rows (subject, each of addresses), all or none.
  virtual void forget(const std::string& subject, const std::vector<std::string>& addresses) = 0;
};

class BlobLedger {
 public:
  // Opens (creating the table when missing) the ledger in the SQLite file `path`.
  explicit BlobLedger(std::string path);
  // The ledger over `rows`.
  explicit BlobLedger(std::unique_ptr<BlobLedgerRows> rows);
  ~BlobLedger();
  BlobLedger(const BlobLedger&) = delete;
  BlobLedger& operator=(const BlobLedger&) = delete;

  // Records that `subject` (nullopt: no subject) puts `address`. Idempotent. Durable in the
  // WAL before it returns (visible to every other connection).
  void add(const std::optional<std::string>& subject, std::string_view address);
  // Addresses `subject` put.
  std::set<std::string, std::less<>> addressesOf(const std::string& subject) const;
  // Those of `addresses` that anyone other than `subject` put too (other subjects and runs
  // without one), except puts by a subject of `shreddedAt` made before it was shredded (at that
  // time).
  std::set<std::string, std::less<>> alsoPutByOthers(
      const std::string& subject, const std::vector<std::string>& addresses,
      const std::map<std::string, int64_t, std::less<>>& shreddedAt = {}) const;
  // Forgets that `subject` put `addresses` (after erasure deleted them).
  void forget(const std::string& subject, const std::vector<std::string>& addresses);

 private:
  std::unique_ptr<BlobLedgerRows> rows_;
};

// Records every put in `ledger` before the inner store sees it (after it, for a store that
// seals content: its address is not the plain hash, and no other subject can share it).
// Everything else is forwarded. `inner` and `ledger` must outlive it.
class LedgeredContentStore : public content::ForwardingContentStore {
 public:
  LedgeredContentStore(std::shared_ptr<content::ContentStore> inner, BlobLedger& ledger)
      : ForwardingContentStore(*inner), inner_(std::move(inner)), ledger_(ledger) {}

  std::string put(std::string_view bytes, const std::optional<std::string>& subject) override;

 private:
  std::shared_ptr<content::ContentStore> inner_;  // owns the target
  BlobLedger& ledger_;
};

}  // namespace loom::compliance
