#include "loom/compliance/blob_ledger.h"

#include "util/sqlite_db.h"

namespace loom::compliance {
namespace {

constexpr int kBusyMillis = 5000;
constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS subject_blobs (subject TEXT NOT NULL, address TEXT NOT NULL, "
    "PRIMARY KEY (subject, address)) WITHOUT ROWID";
constexpr const char* kAdd =
    "INSERT OR IGNORE INTO subject_blobs (subject, address) VALUES (?1, ?2)";
constexpr const char* kOf = "SELECT address FROM subject_blobs WHERE subject = ?1";
constexpr const char* kNotOf = "SELECT DISTINCT address FROM subject_blobs WHERE subject <> ?1";
constexpr const char* kForget = "DELETE FROM subject_blobs WHERE subject = ?1 AND address = ?2";

// Runs without a subject are recorded under the empty subject (never a real one: erasure
// refuses an empty subject).
std::string subjectKey(const std::optional<std::string>& subject) {
  return subject.value_or(std::string());
}

}  // namespace

BlobLedger::BlobLedger(std::string path)
    : db_(std::make_unique<sqlite::Db>(std::move(path), kBusyMillis)) {
  db_->exec(kSchema, "create the blob ledger");
  // A row must be visible to an erasure in another process before the blob is stored; that is
  // the commit, not an fsync. Without one per put, a power loss may lose rows of blobs whose
  // envelopes never reached the log either (the log is fsynced after the put), which only
  // the sweep's grace then reclaims.
  db_->exec("PRAGMA synchronous = NORMAL", "configure the blob ledger");
}

BlobLedger::~BlobLedger() = default;

void BlobLedger::add(const std::optional<std::string>& subject, std::string_view address) {
  std::lock_guard lock(mu_);
  sqlite::StatementUse add(db_->prepare(kAdd));
  std::string key = subjectKey(subject);
  add->bind(1, std::string_view(key));
  add->bind(2, address);
  add->step("record a put in the blob ledger");
}

std::set<std::string, std::less<>> BlobLedger::select(const char* sql,
                                                      const std::string& subject) const {
  std::lock_guard lock(mu_);
  sqlite::StatementUse select(db_->prepare(sql));
  select->bind(1, std::string_view(subject));
  std::set<std::string, std::less<>> out;
  while (select->step("read the blob ledger")) out.emplace(select->text(0));
  return out;
}

std::set<std::string, std::less<>> BlobLedger::addressesOf(const std::string& subject) const {
  return select(kOf, subject);
}

std::set<std::string, std::less<>> BlobLedger::addressesNotOf(const std::string& subject) const {
  return select(kNotOf, subject);
}

void BlobLedger::forget(const std::string& subject, const std::vector<std::string>& addresses) {
  std::lock_guard lock(mu_);
  db_->exec("BEGIN IMMEDIATE", "forget erased blobs in the blob ledger");
  try {
    for (const auto& a : addresses) {
      sqlite::StatementUse forget(db_->prepare(kForget));
      forget->bind(1, std::string_view(subject));
      forget->bind(2, std::string_view(a));
      forget->step("forget an erased blob in the blob ledger");
    }
    db_->exec("COMMIT", "forget erased blobs in the blob ledger");
  } catch (...) {
    db_->execNoThrow("ROLLBACK");
    throw;
  }
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
