// eraseSubject: GDPR Art. 17 erasure of one data subject (ADR 0140 D8 (b), D11 rule 3, D12;
// docs/compliance.md). It crypto-shreds the subject's keys, so every sealed event, snapshot
// and archived copy of theirs reads as erased, and deletes the claim-checked blobs only the
// subject's executions cite (a blob sits outside the keys that seal the log). In order:
//  1. plan (planContentDeletion), BEFORE anything is destroyed: collect every envelope ref the
//     subject's executions cite (broad collection: live logs, archive segments, snapshots),
//     drop each one another non-erased execution still cites at the trusted position
//     (OtherExecutions: one pass over the others' logs, archive segments and snapshots, with
//     early exit), and read the touch cutoff (touchClock) of the content store first.
//     Refuse with ContentCopiesRemainError when blobs are cited and the content store is not
//     ErasableContent, or the event store cannot enumerate its executions;
//  2. journal ERASURE_CONTENT_DELETE_INTENDED {subject, addresses, touchCutoff} in the
//     control log;
//  3. shred the subject's keys (KeyStore::shred) and journal SUBJECT_SHREDDED {subject};
//  4. deleteIfUntouchedSince(address, touchCutoff) each address: a blob put again since the
//     cutoff (a concurrent identical put for another execution) is spared and counted retained;
//  5. journal ERASURE_CONTENT_DELETED {subject, deleted, retained, intent}.
// A crash anywhere after step 2 is finished by the next call for the subject: an intent with
// no matching ERASURE_CONTENT_DELETED is resumed from its journaled addresses and cutoff (shred
// and conditional deletes are idempotent), and the call returns what an uninterrupted erasure
// would have. The subject's logs are NOT removed: they stay, sealed, and read as erased
// markers. Run one erasure per subject at a time: two concurrent ones both journal an intent
// and both delete (harmless, conditional deletes), but their results need not agree. Callers
// serialize them (a lock file); the coordinator is otherwise thread-safe as its stores.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loom/compliance/blob_ledger.h"
#include "loom/compliance/key_store.h"
#include "loom/content/content_store.h"
#include "loom/json/json.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/snapshot_store.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/sweep.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"

namespace loom::compliance {

// Erasure refused before anything was shredded: it cannot prove it would remove every copy of
// the subject's blobs Loom holds. FailedPrecondition: fix the setup (wire a content store with
// the capabilities ErasableContent names, or an event store that can list its executions),
// then run the erasure again. reason() is the gap alone, message() the whole sentence.
class ContentCopiesRemainError : public FailedPreconditionError {
 public:
  ContentCopiesRemainError(std::string subject, std::string reason, int64_t blobs);
  const std::string& subject() const { return subject_; }
  const std::string& reason() const { return reason_; }
  // Blobs the subject's executions cite (or the pending intent names) that would remain.
  int64_t blobs() const { return blobs_; }

 private:
  std::string subject_;
  std::string reason_;
  int64_t blobs_;
};

// ErasableContent: what erasure needs of a content store to reach the blobs (D8 (b), D12):
// delete at all (remove), a delete that spares a concurrently re-put blob
// (deleteIfUntouchedSince) and the clock touches are measured on (touchClock).
struct ErasableContent {
  // Why `store` is not erasable content ("no content store is wired", "the content store
  // cannot delete blobs (no remove)", ...); nullopt when it is. Null means not wired.
  static std::optional<std::string> gap(const content::ContentStore* store);
  static bool is(const content::ContentStore* store) { return !gap(store); }
};

struct EraseCoordinatorOptions {
  kernel::EventStore& events;  // live logs and the control log
  KeyStore& keys;
  // ErasableContent; null = not wired (refused as soon as the subject's executions cite a blob).
  content::ContentStore* content = nullptr;
  const sweep::Archive* archive = nullptr;             // null = no archive segments
  kernel::SnapshotStore* snapshots = nullptr;          // null = no snapshots
  std::shared_ptr<const Clock> clock = systemClock();  // timestamps of the control events
  // Threads that delete blobs (they mostly wait on the disk); reading logs uses at most one
  // per hardware thread of these.
  int concurrency = 8;
  // Who put which blob (blob_ledger.h); null = none kept. With it, a blob another subject put
  // is never deleted and one the subject put is deleted even when no readable log cites it.
  BlobLedger* ledger = nullptr;
  // Other homes that share the content store (storage.contentStore.shared): a blob any of them
  // cites is kept, counted in keptCitedElsewhere.
  std::vector<sweep::PinSource> alsoCitedBy;
  // Called before the shred and before the blob deletes; a throw stops the erasure there (run
  // it again to finish). The CLI proves its maintenance lock is still held (on PostgreSQL its
  // connection can end, and another machine's erasure or sweep may then run).
  std::function<void()> beforeDestroying;
};

struct ContentDeleted {
  // Planned blobs this erasure deleted (a resumed one counts those its interrupted attempt
  // deleted: it finds them gone).
  int64_t deleted = 0;
  int64_t retained = 0;  // planned blobs spared: put again since the touch cutoff
  // Planned blobs a fresh erasure found absent from the content store: deleted before (by a
  // sweep of reclaimable blobs, an earlier erasure) or never stored there. Not counted deleted.
  int64_t missing = 0;
  // Of the retained, those whose last put is dated after the content store's clock at the
  // moment it was spared: no put can date a blob so (a put stamps the store's now), so the date
  // comes from a clock that ran ahead or was set back (a store copied or restored from another
  // machine). Kept like every blob touched since the cutoff; they wait for the store's clock to
  // pass datedAheadUntil (the latest of their dates, ms since the epoch; 0 when none), after
  // which a repeat of the erasure deletes them.
  int64_t datedAhead = 0;
  int64_t datedAheadUntil = 0;
  bool operator==(const ContentDeleted&) const = default;
};

struct EraseSubjectResult {
  std::string subject;
  bool shredded = false;  // the subject's keys are destroyed (now or by an earlier attempt)
  ContentDeleted contentDeleted;
  int64_t intent = 0;  // control-log seq of the ERASURE_CONTENT_DELETE_INTENDED carried out
  // Blobs the subject's runs cite that were kept because another execution cites (or put) them.
  std::vector<std::string> keptCitedElsewhere;
  bool operator==(const EraseSubjectResult&) const = default;
};

// What erasure will delete, decided before the shred.
struct ContentDeletionPlan {
  std::vector<std::string> addresses;    // sorted, distinct
  std::optional<int64_t> touchCutoff;    // content store touchClock(); null when nothing to delete
  std::optional<int64_t> resumesIntent;  // seq of a prior attempt's unfinished intent
  int64_t citedBySubject = 0;       // broad refs of the subject's executions (fresh plans only)
  int64_t stillCitedElsewhere = 0;  // of those, kept because another execution cites them
  std::vector<std::string> keptAddresses;  // those, sorted
};

class EraseCoordinator {
 public:
  // The stores in `options` must outlive the coordinator.
  explicit EraseCoordinator(EraseCoordinatorOptions options);

  // Decides what eraseSubject would delete, writing and destroying nothing: the pending intent
  // of an interrupted erasure of `subject` when there is one, else a fresh plan (step 1 above).
  // Throws InvalidArgumentError for an empty subject, ContentCopiesRemainError (with the
  // reason) when blobs are cited (or the pending intent still names addresses) and the content
  // store is not ErasableContent or the event store cannot enumerate its executions; store
  // errors propagate.
  ContentDeletionPlan planContentDeletion(const std::string& subject) const;

  // Erases `subject` (steps 1-5 above) and returns what it did. Refusals throw before anything
  // is journaled or shredded (as planContentDeletion). A store error after the intent is
  // journaled propagates and leaves the erasure to be finished by the next call, which
  // returns the result the uninterrupted erasure would have; with a ledger, when the subject's
  // runs put blobs after that intent (before the shred), the same call then erases those too in
  // a fresh pass (its own intent, counted in the result). A call after a finished erasure
  // with nothing new to erase (no key, no cited blob) writes nothing and returns the recorded
  // result again.
  EraseSubjectResult eraseSubject(const std::string& subject);

 private:
  int scanThreads() const;         // options.concurrency, at most one per hardware thread
  int64_t cutoffAfterNow() const;  // the content store's first touch-clock tick after now
  // One erasure pass: resumes an interrupted attempt's intent (`resumed` set) or plans afresh.
  EraseSubjectResult eraseOnce(const std::string& subject, bool& resumed);

  EraseCoordinatorOptions options_;
};

// One-shot convenience: EraseCoordinator(options).eraseSubject(subject).
EraseSubjectResult eraseSubject(const EraseCoordinatorOptions& options, const std::string& subject);

// {"subject": S, "shredded": B, "contentDeleted": {"deleted": N, "retained": M, "missing": K,
// "datedAhead": D, "datedAheadUntil": RFC 3339 or null, "keptCitedElsewhere": [addresses]}}:
// what `loom erase --json` prints.
json::value toJson(const EraseSubjectResult& result);
// Human-readable lines for `loom erase`.
std::string describe(const EraseSubjectResult& result);

}  // namespace loom::compliance
