#include "loom/compliance/erase.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "compliance/claim_check_refs.h"
#include "erase_journal.h"
#include "erase_parallel.h"
#include "loom/compliance/subject.h"
#include "loom/util/clock.h"
#include "sweep/content_walker.h"
#include "util/utf8.h"

namespace loom::compliance {
namespace {

using IdSet = std::set<std::string, std::less<>>;

std::string refusalMessage(const std::string& subject, const std::string& reason, int64_t blobs) {
  std::string cited = blobs < 0 ? "an unknown number of blobs"
                                : std::to_string(blobs) + (blobs == 1 ? " blob" : " blobs");
  return "erasure of subject '" + shownSubject(subject) +
         "' refused before shredding anything: " + cited +
         " of its executions would stay in the content store because " + reason +
         "; fix that and run the erasure again (docs/compliance.md, \"Refusals\")";
}

// When `address` is dated after the store's clock (a skewed clock's date), that date.
std::optional<int64_t> touchedAhead(const content::ContentStore& store, std::string_view address) {
  if (!store.capabilities().enumerate) return std::nullopt;
  std::optional<content::BlobInfo> info = store.stat(address);
  if (!info) return std::nullopt;
  int64_t now = store.touchClock();  // read after the stat: a put before it is dated <= now
  if (info->lastTouchedMillis <= now) return std::nullopt;
  return info->lastTouchedMillis;
}

void requireSubject(const std::string& subject) {
  // Any bytes: an old home may hold a subject that is not UTF-8 (ADR 0025), and the journal
  // names it so that it stays UTF-8 (putSubject).
  if (subject.empty()) throw InvalidArgumentError("eraseSubject: the subject is empty");
}

// Runs a planning read; a store that cannot enumerate (FailedPreconditionError) is a refusal.
template <typename Fn>
auto enumerating(const std::string& subject, int64_t blobs, Fn&& fn) {
  try {
    return fn();
  } catch (const ContentCopiesRemainError&) {
    throw;
  } catch (const FailedPreconditionError& e) {
    throw ContentCopiesRemainError(
        subject,
        std::string("the stores cannot enumerate every execution's citations (") + e.what() + ")",
        blobs);
  }
}

bool hasKey(const KeyStore& keys, const std::string& subject) {
  auto subjects = keys.subjects();
  return std::find(subjects.begin(), subjects.end(), subject) != subjects.end();
}

// True when none of `addresses` is stored (a log that still reads in plaintext cites blobs an
// earlier erasure deleted).
bool nothingLeft(const content::ContentStore* store, const std::vector<std::string>& addresses) {
  return std::none_of(addresses.begin(), addresses.end(),
                      [&](const std::string& a) { return store->has(a); });
}

}  // namespace

ContentCopiesRemainError::ContentCopiesRemainError(std::string subject, std::string reason,
                                                   int64_t blobs)
    : FailedPreconditionError(refusalMessage(subject, reason, blobs)),
      subject_(std::move(subject)),
      reason_(std::move(reason)),
      blobs_(blobs) {}

std::optional<std::string> ErasableContent::gap(const content::ContentStore* store) {
  if (store == nullptr) return "no content store is wired for erasure";
  auto caps = store->capabilities();
  if (!caps.remove) return "the content store cannot delete blobs (no remove)";
  if (!caps.deleteIfUntouchedSince) {
    return "the content store lacks deleteIfUntouchedSince (ContentStore SPI 1.3.0)";
  }
  if (!caps.touchClock) return "the content store lacks touchClock (ContentStore SPI 1.3.0)";
  return std::nullopt;
}

EraseCoordinator::EraseCoordinator(EraseCoordinatorOptions options) : options_(options) {
  if (!options_.clock) throw InvalidArgumentError("EraseCoordinatorOptions.clock is null");
}

int EraseCoordinator::scanThreads() const {
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, std::min(options_.concurrency, cores));
}

ContentDeletionPlan EraseCoordinator::planContentDeletion(const std::string& subject) const {
  requireSubject(subject);
  ContentDeletionPlan plan;
  auto pending = detail::latestErasure(options_.events, subject);
  if (pending && !pending->finished) {
    // An interrupted erasure: finish what it decided (its logs may read as erased by now).
    if (!pending->addresses.empty()) {
      if (auto gap = ErasableContent::gap(options_.content)) {
        throw ContentCopiesRemainError(
            subject, *gap + " (a prior erasure's journaled intent still has addresses to delete)",
            static_cast<int64_t>(pending->addresses.size()));
      }
    }
    plan.addresses = std::move(pending->addresses);
    plan.keptAddresses = std::move(pending->kept);
    plan.touchCutoff = pending->touchCutoff;
    plan.resumesIntent = pending->intent;
    return plan;
  }

  CitationSources sources{&options_.events, options_.archive, options_.snapshots, &options_.keys};
  // The cutoff is read before anything is scanned: a blob put again from now on is spared.
  std::optional<int64_t> cutoff;
  if (ErasableContent::is(options_.content)) cutoff = cutoffAfterNow();
  SubjectExecutions executions =
      enumerating(subject, -1, [&] { return executionsOfSubject(sources, subject); });
  ClaimCheckRefs refs = enumerating(
      subject, -1, [&] { return claimCheckRefsOfLogs(sources, executions.ids, scanThreads()); });
  // The other executions' metadata first, so one pass over the snapshots serves both sides.
  // A store that cannot list them is a refusal only once blobs turn out to be cited.
  std::optional<OtherExecutions> others;
  std::optional<std::string> cannotList;
  try {
    others.emplace(sources, subject);
  } catch (const FailedPreconditionError& e) {
    cannotList = e.what();
  }
  IdSet citedBySnapshots;  // by snapshots that count as another execution's evidence
  if (options_.snapshots != nullptr) {
    enumerating(subject, -1, [&] {
      options_.snapshots->forEach([&](const kernel::Snapshot& s) {
        if (isSubjectSnapshot(s, subject, executions.ids)) {
          addClaimCheckRefs(s.state, refs);
        } else if (others && others->snapshotCounts(s, executions.ids)) {
          sweep::visitCitedAddresses(s.state,
                                     [&](std::string_view a) { citedBySnapshots.emplace(a); });
        }
      });
    });
  }
  for (const sweep::PinSource& home : options_.alsoCitedBy) {
    enumerating(subject, -1, [&] {
      home.visitAddresses([&](std::string_view a) { citedBySnapshots.emplace(a); });
    });
  }
  // After the cutoff: every put the conditional delete would not spare is in the ledger.
  IdSet putByOthers;
  if (options_.ledger != nullptr) {
    for (const auto& a : options_.ledger->addressesOf(subject)) {
      refs.try_emplace(a, ClaimCheckRef{a, std::nullopt, std::nullopt});
    }
    std::vector<std::string> addresses;
    addresses.reserve(refs.size());
    for (const auto& [address, ref] : refs) addresses.push_back(address);
    putByOthers =
        options_.ledger->alsoPutByOthers(subject, addresses, detail::shredTimes(options_.events));
  }
  plan.citedBySubject = static_cast<int64_t>(refs.size());
  if (refs.empty()) return plan;
  if (auto gap = ErasableContent::gap(options_.content)) {
    throw ContentCopiesRemainError(subject, *gap, plan.citedBySubject);
  }
  if (cannotList) {
    throw ContentCopiesRemainError(
        subject, "the stores cannot enumerate every execution's citations (" + *cannotList + ")",
        plan.citedBySubject);
  }

  IdSet candidates;
  for (const auto& [address, ref] : refs) {
    if (!citedBySnapshots.contains(address) && !putByOthers.contains(address)) {
      candidates.insert(address);
    }
  }
  enumerating(subject, plan.citedBySubject,
              [&] { return others->strikeTrustedRefs(candidates, scanThreads()); });
  plan.stillCitedElsewhere = plan.citedBySubject - static_cast<int64_t>(candidates.size());
  plan.addresses.assign(candidates.begin(), candidates.end());
  for (const auto& [address, ref] : refs) {
    if (!candidates.contains(address)) plan.keptAddresses.push_back(address);
  }
  if (!plan.addresses.empty()) plan.touchCutoff = cutoff;
  return plan;
}

int64_t EraseCoordinator::cutoffAfterNow() const {
  // The touch clock counts milliseconds: a put that finished just before the erasure began
  // may carry the very time read now, and would be spared as if put during the erasure — by
  // every repeat of it too, since a resumed erasure keeps its intent's cutoff (found by
  // `loom sim`). So the cutoff is the first tick after now: everything put before the erasure
  // began is older than it.
  int64_t start = options_.content->touchClock();
  for (int i = 0; i < 100; ++i) {
    options_.clock->sleepMillis(1);
    int64_t now = options_.content->touchClock();
    if (now > start) return now;
  }
  return options_.content->touchClock();  // a clock that does not move (a test's): as read
}

EraseSubjectResult EraseCoordinator::eraseSubject(const std::string& subject) {
  requireSubject(subject);
  bool resumed = false;
  EraseSubjectResult result = eraseOnce(subject, resumed);
  // Only the ledger tells the subject's own later puts from another's put still in flight
  // (whose envelope is not journaled yet): without one, a fresh pass is left to the operator.
  if (!resumed || options_.ledger == nullptr) return result;
  // This call finished an interrupted attempt from its intent (D8 (b)). That plan predates
  // the blobs the subject's runs put until this call's shred (found by `loom sim`, kept seed 756),
  // so a fresh pass erases those; when nothing is left it writes nothing and changes nothing.
  bool again = false;
  EraseSubjectResult more = eraseOnce(subject, again);
  if (more.intent == result.intent) return result;
  result.intent = more.intent;
  result.contentDeleted.deleted += more.contentDeleted.deleted;
  result.contentDeleted.retained += more.contentDeleted.retained;
  for (auto& kept : more.keptCitedElsewhere) {
    if (std::find(result.keptCitedElsewhere.begin(), result.keptCitedElsewhere.end(), kept) ==
        result.keptCitedElsewhere.end()) {
      result.keptCitedElsewhere.push_back(std::move(kept));
    }
  }
  return result;
}

EraseSubjectResult EraseCoordinator::eraseOnce(const std::string& subject, bool& resumed) {
  auto last = detail::latestErasure(options_.events, subject);
  ContentDeletionPlan plan = planContentDeletion(subject);
  resumed = plan.resumesIntent.has_value();
  EraseSubjectResult result;
  result.subject = subject;

  if (!plan.resumesIntent && last && last->finished && !hasKey(options_.keys, subject) &&
      nothingLeft(options_.content, plan.addresses)) {
    // Finished before, and nothing new to erase: the recorded result, nothing written.
    result.shredded = last->shredJournaled;
    result.contentDeleted = *last->finished;
    result.keptCitedElsewhere = last->kept;
    result.intent = last->intent;
    return result;
  }

  auto now = [&] { return options_.clock->nowMillis(); };
  if (plan.resumesIntent) {
    result.intent = *plan.resumesIntent;
  } else {
    json::array addresses;
    for (const auto& a : plan.addresses) addresses.emplace_back(a);
    json::array kept;
    for (const auto& a : plan.keptAddresses) kept.emplace_back(a);
    json::object intended{
        {"subject", ""}, {"addresses", std::move(addresses)}, {"kept", std::move(kept)}};
    putSubject(intended, subject);
    intended["touchCutoff"] = plan.touchCutoff ? json::value(*plan.touchCutoff) : json::value();
    result.intent =
        detail::journal(options_.events, detail::kIntendedType, std::move(intended), now());
  }

  std::exception_ptr shredUnfinished;  // the key is gone, its old bytes may not be yet
  bool destroyed = false;
  if (options_.beforeDestroying) options_.beforeDestroying();
  try {
    destroyed = options_.keys.shred(subject);
  } catch (const Error&) {
    // Only a key that is gone now: a tombstone may be an earlier erasure's, and the subject's
    // current key may still be there (the delete itself failed).
    if (hasKey(options_.keys, subject) || !options_.keys.wasShredded(subject)) throw;
    // Finish deleting the blobs first: until the erasure is run again, only the wrapped key's
    // old bytes are left, not the subject's readable blobs.
    shredUnfinished = std::current_exception();
  }
  result.shredded = destroyed || options_.keys.wasShredded(subject);
  bool shredJournaled = plan.resumesIntent && last && last->shredJournaled;
  if (result.shredded && !shredJournaled) {
    json::object shredded;
    putSubject(shredded, subject);
    detail::journal(options_.events, detail::kShreddedType, std::move(shredded), now());
  }

  // Addresses are sorted; deleting them in that order would send every concurrent delete to
  // the same prefix (a store's per-prefix lock and folder), so go by their last digits.
  std::vector<const std::string*> order;
  for (const auto& a : plan.addresses) order.push_back(&a);
  std::sort(order.begin(), order.end(), [](const std::string* a, const std::string* b) {
    return std::lexicographical_compare(a->rbegin(), a->rend(), b->rbegin(), b->rend());
  });
  std::atomic<int64_t> deleted{0}, retained{0}, missing{0}, datedAhead{0}, datedAheadUntil{0};
  // Only what this call deleted leaves the ledger. A missing blob may be a put still in flight
  // (its ledger row is written first) and a retained one may be the subject's own run putting
  // it again: both stay in the ledger, so a repeated erase deletes them once they land.
  std::vector<char> deletedHere(order.size(), 0);
  if (options_.beforeDestroying && !order.empty()) options_.beforeDestroying();
  detail::forEachIndexInParallel(order.size(), options_.concurrency, [&](std::size_t i) {
    const std::string& address = *order[i];
    if (options_.content->deleteIfUntouchedSince(address, *plan.touchCutoff)) {
      ++deleted;
      deletedHere[i] = 1;
    } else if (options_.content->has(address)) {
      ++retained;  // put again since the cutoff: another execution cites it now
      if (auto at = touchedAhead(*options_.content, address)) {  // or dated by a skewed clock
        ++datedAhead;
        int64_t seen = datedAheadUntil.load();
        while (seen < *at && !datedAheadUntil.compare_exchange_weak(seen, *at)) {
        }
      }
    } else if (resumed) {
      ++deleted;  // gone already: the interrupted attempt of this erasure deleted it
      deletedHere[i] = 1;
    } else {
      ++missing;  // not in this store: never stored here, or deleted before
    }
    return true;
  });
  result.contentDeleted = ContentDeleted{deleted.load(), retained.load(), missing.load(),
                                         datedAhead.load(), datedAheadUntil.load()};
  result.keptCitedElsewhere = plan.keptAddresses;
  if (options_.ledger != nullptr) {
    std::vector<std::string> forgotten;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (deletedHere[i]) forgotten.push_back(*order[i]);
    }
    options_.ledger->forget(subject, forgotten);
  }
  if (shredUnfinished) {
    // Not journaled as finished: running it again resumes this intent and shreds again.
    try {
      std::rethrow_exception(shredUnfinished);
    } catch (const Error& e) {
      rethrowWithContext(e, "erasure of subject '" + shownSubject(subject) +
                                "' deleted its blobs (" +
                                std::to_string(result.contentDeleted.deleted) + " deleted, " +
                                std::to_string(result.contentDeleted.retained) +
                                " retained), but is not finished (the old bytes of those "
                                "packed in a database file, like the key's, stay in it until "
                                "the next checkpoint; run it again)");
    }
  }

  json::object done{{"subject", ""},
                    {"deleted", result.contentDeleted.deleted},
                    {"retained", result.contentDeleted.retained},
                    {"missing", result.contentDeleted.missing},
                    {"intent", result.intent}};
  putSubject(done, subject);
  if (result.contentDeleted.datedAhead > 0) {
    done["datedAhead"] = result.contentDeleted.datedAhead;
    done["datedAheadUntil"] = result.contentDeleted.datedAheadUntil;
  }
  detail::journal(options_.events, detail::kDeletedType, std::move(done), now());
  return result;
}

EraseSubjectResult eraseSubject(const EraseCoordinatorOptions& options,
                                const std::string& subject) {
  return EraseCoordinator(options).eraseSubject(subject);
}

json::value toJson(const EraseSubjectResult& r) {
  json::array kept;
  for (const auto& a : r.keptCitedElsewhere) kept.emplace_back(a);
  json::object out{
      {"subject", ""},
      {"shredded", r.shredded},
      {"contentDeleted",
       json::object{
           {"deleted", r.contentDeleted.deleted},
           {"retained", r.contentDeleted.retained},
           {"missing", r.contentDeleted.missing},
           {"datedAhead", r.contentDeleted.datedAhead},
           {"datedAheadUntil", r.contentDeleted.datedAhead > 0
                                   ? json::value(formatTimestamp(r.contentDeleted.datedAheadUntil))
                                   : json::value()},
           {"keptCitedElsewhere", std::move(kept)}}}};
  putSubject(out, r.subject);
  return out;
}

std::string describe(const EraseSubjectResult& r) {
  std::string out = "erased subject '" + shownSubject(r.subject) + "'\n";
  out += r.shredded ? "  keys: shredded (sealed events, snapshots and archived copies read as "
                      "erased)\n"
                    : "  keys: none to shred (the subject had no data key)\n";
  out += "  blobs: " + std::to_string(r.contentDeleted.deleted) + " deleted";
  const ContentDeleted& c = r.contentDeleted;
  if (c.retained > c.datedAhead) {
    out += ", " + std::to_string(c.retained - c.datedAhead) +
           " retained (put again for another execution while the erasure ran)";
  }
  if (c.datedAhead > 0) {
    out += ", " + std::to_string(c.datedAhead) +
           " retained because their last put is dated after the content store's clock (until " +
           formatTimestamp(c.datedAheadUntil) +
           ": a clock set back, or blobs copied from a machine whose clock ran ahead); run the "
           "erasure again after that time, or once their dates are set right (`touch` the "
           "files), to delete them";
  }
  if (r.contentDeleted.missing > 0) {
    out += ", " + std::to_string(r.contentDeleted.missing) +
           " missing (not in the content store: reclaimed or deleted before)";
  }
  if (!r.keptCitedElsewhere.empty()) {
    out += ", " + std::to_string(r.keptCitedElsewhere.size()) +
           " kept (another subject's run cites or put the same bytes)";
  }
  out += "\n  logs: kept (sealed under the shredded key, they read as erased)\n";
  out += "  control log: intent #" + std::to_string(r.intent) + "\n";
  return out;
}

}  // namespace loom::compliance
