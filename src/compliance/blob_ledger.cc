#include "loom/compliance/blob_ledger.h"

#include "loom/util/clock.h"
#include "util/sqlite_db.h"

namespace loom::compliance {
namespace {

constexpr int kBusyMillis = 5000;
constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS subject_blobs (subject TEXT NOT NULL, address TEXT NOT NULL, "
    "put_at INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (subject, address)) WITHOUT ROWID";
// Who else put an address: one index lookup per address an erasure asks about.
constexpr const char* kAddressIndex =
    "CREATE INDEX IF NOT EXISTS subject_blobs_by_address ON subject_blobs (address)";
// Each put refreshes put_at: the row tells when the subject last put the blob.
constexpr const char* kAdd =
    "INSERT INTO subject_blobs (subject, address, put_at) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (subject, address) DO UPDATE SET put_at = excluded.put_at";
constexpr const char* kOf = "SELECT address FROM subject_blobs WHERE subject = ?1";
constexpr const char* kOthersOf =
    "SELECT subject, put_at FROM subject_blobs WHERE address = ?1 AND subject <> ?2";
constexpr const char* kForget = "DELETE FROM subject_blobs WHERE subject = ?1 AND address = ?2";

// Runs without a subject are recorded under the empty subject (never a real one: erasure
// refuses an empty subject).
std::string subjectKey(const std::optional<std::string>& subject) {
  return subject.value_or(std::string());
}

// The home's SQLite database: one connection under a mutex.
class SqliteBlobLedgerRows : public BlobLedgerRows {
 public:
  explicit SqliteBlobLedgerRows(std::string path) : db_(std::move(path), kBusyMillis) {
    db_.exec(kSchema, "create the blob ledger");
    if (!db_.hasColumn("subject_blobs", "put_at")) {  // a ledger from before put times
      db_.exec("ALTER TABLE subject_blobs ADD COLUMN put_at INTEGER NOT NULL DEFAULT 0",
               "add subject_blobs.put_at");
    }
    db_.exec(kAddressIndex, "index the blob ledger by address");
    // A row must be visible to an erasure in another process before the blob is stored; that
    // is the commit, not an fsync. Without one per put, a power loss may lose rows of blobs
    // whose envelopes never reached the log either (the log is fsynced after the put), which
    // only the sweep's grace then reclaims.
    db_.exec("PRAGMA synchronous = NORMAL", "configure the blob ledger");
  }

  void add(const std::string& subject, std::string_view address) override {
    std::lock_guard lock(mu_);
    sqlite::StatementUse add(db_.prepare(kAdd));
    add->bind(1, std::string_view(subject));
    add->bind(2, address);
    add->bind(3, systemClock()->nowMillis());
    add->step("record a put in the blob ledger");
  }

  std::set<std::string, std::less<>> addressesOf(const std::string& subject) const override {
    std::lock_guard lock(mu_);
    sqlite::StatementUse select(db_.prepare(kOf));
    select->bind(1, std::string_view(subject));
    std::set<std::string, std::less<>> out;
    while (select->step("read the blob ledger")) out.emplace(select->text(0));
    return out;
  }

  void forEachOtherPut(
      const std::string& subject, const std::vector<std::string>& addresses,
      const std::function<void(std::string_view, std::string_view, int64_t)>& visit)
      const override {
    std::lock_guard lock(mu_);
    db_.exec("BEGIN", "read the blob ledger");  // one snapshot of the table for every lookup
    try {
      for (const auto& address : addresses) {
        sqlite::StatementUse select(db_.prepare(kOthersOf));
        select->bind(1, std::string_view(address));
        select->bind(2, std::string_view(subject));
        while (select->step("read the blob ledger")) {
          visit(address, select->text(0), select->int64(1));
        }
      }
      db_.exec("COMMIT", "read the blob ledger");
    } catch (...) {
      db_.execNoThrow("ROLLBACK");
      throw;
    }
  }

  void forget(const std::string& subject, const std::vector<std::string>& addresses) override {
    std::lock_guard lock(mu_);
    db_.exec("BEGIN IMMEDIATE", "forget erased blobs in the blob ledger");
    try {
      for (const auto& a : addresses) {
        sqlite::StatementUse forget(db_.prepare(kForget));
        forget->bind(1, std::string_view(subject));
        forget->bind(2, std::string_view(a));
        forget->step("forget an erased blob in the blob ledger");
      }
      db_.exec("COMMIT", "forget erased blobs in the blob ledger");
    } catch (...) {
      db_.execNoThrow("ROLLBACK");
      throw;
    }
  }

 private:
  mutable std::mutex mu_;
  mutable sqlite::Db db_;  // GUARDED_BY(mu_)
};

}  // namespace

BlobLedger::BlobLedger(std::string path)
    : rows_(std::make_unique<SqliteBlobLedgerRows>(std::move(path))) {}

BlobLedger::BlobLedger(std::unique_ptr<BlobLedgerRows> rows) : rows_(std::move(rows)) {}

BlobLedger::~BlobLedger() = default;

void BlobLedger::add(const std::optional<std::string>& subject, std::string_view address) {
  rows_->add(subjectKey(subject), address);
}

std::set<std::string, std::less<>> BlobLedger::addressesOf(const std::string& subject) const {
  return rows_->addressesOf(subject);
}

std::set<std::string, std::less<>> BlobLedger::alsoPutByOthers(
    const std::string& subject, const std::vector<std::string>& addresses,
    const std::map<std::string, int64_t, std::less<>>& shreddedAt) const {
  std::set<std::string, std::less<>> out;
  if (addresses.empty()) return out;
  rows_->forEachOtherPut(subject, addresses, [&](std::string_view address, std::string_view who,
                                                 int64_t putAt) {
    auto shred = shreddedAt.find(who);
    // A put by an erased subject before its erasure protects nothing any more: that erasure
    // dealt with it (or left it to a repeated erase of that subject).
    if (shred != shreddedAt.end() && putAt <= shred->second) return;
    out.emplace(address);
  });
  return out;
}

void BlobLedger::forget(const std::string& subject, const std::vector<std::string>& addresses) {
  rows_->forget(subject, addresses);
}

std::string LedgeredContentStore::put(std::string_view bytes,
                                      const std::optional<std::string>& subject) {
  if (inner_->capabilities().sealsContent) {
    std::string address = inner_->put(bytes, subject);
    ledger_.add(subject, address);
    return address;
  }
  ledger_.add(subject, content::sha256Hex(bytes));  // before the blob can exist
  return inner_->put(bytes, subject);
}

}  // namespace loom::compliance
