// The writer the SQLite event store lends the blobs packed in its file (ADR 0017) and the writes
// staged on it (ADR 0019): LentWriter is the BorrowedWriter handed out; StagedWrites keeps what
// is staged, and the keys of staged writes that were lost, for the store's group commit.
// Internal to sqlite_event_store.cc.
#pragma once

#include <exception>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "append_plan.h"
#include "util/sqlite_db.h"

namespace loom::kernel {

// A write staged on the lent writer (BorrowedWriter::stage): run by the next group's leader
// before the group's requests.
struct StagedWrite {
  std::string key;
  std::function<void(sqlite::Db&)> write;
  std::function<void(std::exception_ptr)> done;
  std::function<bool(sqlite::Db&)> touchIfPresent;  // may be empty (BorrowedWriter::stage)
  std::exception_ptr error;                         // set by the leader when the write is lost
  int groupsFailed = 0;      // groups that failed around it (it is tried again, up to a limit)
};

// How many failed groups a staged write outlives before it is lost: a group fails for a reason
// of its own (a busy lock, another request breaking it), and the write is still whole.
inline constexpr int kStagedWriteGroups = 3;

// Runs a lent write on `writer` (the group's leader), marking this thread so that the write
// cannot call LentWriter::run, which would wait for the group running it.
void runLentWrite(sqlite::Db& writer, const std::function<void(sqlite::Db&)>& write);

// The writer lent by SqliteEventStore::lendWriter: `submit` runs a write as a request of the
// store's group commit, `stage` queues a staged write, while the store is open. The store's
// destructor closes it, waiting for the writes in flight. Thread-safe.
class LentWriter final : public sqlite::BorrowedWriter {
 public:
  using Submit = std::function<void(const std::function<void(sqlite::Db&)>&)>;
  using Stage = std::function<void(StagedWrite)>;
  LentWriter(std::string path, Submit submit, Stage stage)
      : path_(std::move(path)), submit_(std::move(submit)), stage_(std::move(stage)) {}

  const std::string& path() const override { return path_; }
  bool run(const std::function<void(sqlite::Db&)>& write) override;
  bool stage(std::string key, std::function<void(sqlite::Db&)> write,
             std::function<void(std::exception_ptr)> done,
             std::function<bool(sqlite::Db&)> touchIfPresent) override;
  void close();

 private:
  const std::string path_;
  std::shared_mutex mu_;
  Submit submit_;  // GUARDED_BY(mu_); empty once closed
  Stage stage_;    // GUARDED_BY(mu_); empty once closed
};

// The staged writes of one store. add and empty are for any thread; the rest for the group
// commit's leader alone (leaders run one at a time).
class StagedWrites {
 public:
  void add(StagedWrite write);
  bool empty() const;
  // Drops every write staged and not yet taken into a group, telling each `error` (a process
  // dying drops them uncommitted).
  void dropAll(const std::exception_ptr& error);

  // Takes every write staged so far into the group about to commit and returns them. Taken
  // after the group left the queue, so an append in the group finds every write staged before
  // it was submitted here or in an earlier group.
  std::vector<StagedWrite>& takeForGroup();
  // `write` was written in the group's transaction: a key lost before is there now.
  void written(const StagedWrite& write) { lost_.erase(write.key); }
  // `write` failed on its own (write.error): lost, its key refuses citing appends.
  void lose(const StagedWrite& write) {
    lost_[write.key] = {write.error, write.touchIfPresent, false};
  }
  // Tells every write of the group its outcome: committed (nullptr), or lost (its own error).
  // When the group failed (`groupError`), the writes that did not fail themselves are staged
  // again, ahead of the ones staged since, until kStagedWriteGroups groups failed around them:
  // then they are lost with the group's error.
  void finishGroup(const std::exception_ptr& groupError);

  // An append whose text holds the key of a lost write would cite what is not stored: throws
  // ContentStoreUnavailableError naming the execution, the step (or event), the key, `path`
  // and the write's error (nothing recorded, the run resumable). A lost key that the write's
  // `touchIfPresent` finds in `writer`'s transaction after all refuses nothing, and is forgotten
  // once the group commits (the row may be one an earlier write of the group put, gone if the
  // group fails).
  void refuseCitingLost(const std::string& executionId, const AppendPlan& plan,
                        const std::string& path, sqlite::Db& writer);

 private:
  mutable std::mutex mu_;
  std::vector<StagedWrite> queued_;  // GUARDED_BY(mu_): for the next group
  std::vector<StagedWrite> group_;   // leader only: the group's writes
  struct Lost {
    std::exception_ptr error;
    std::function<bool(sqlite::Db&)> touchIfPresent;
    bool foundInGroup = false;  // touchIfPresent found it in the group being written
  };
  // Leader only: keys of writes lost, until a later staged write of the key commits or the key
  // is found present.
  std::unordered_map<std::string, Lost> lost_;
};

}  // namespace loom::kernel
