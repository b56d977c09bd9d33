// Group commit for the SQLite event store (leveldb's writer queue): each writer enqueues its
// request; the first one not behind a running commit becomes the leader, takes every request
// queued so far and commits them together (one transaction, one fsync) while the next ones
// queue up behind it. Each caller returns only once the group holding its request is done,
// so merging never weakens durability. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace loom::kernel {

template <typename Request>
class GroupCommitQueue {
 public:
  // Commits a group: records each request's outcome in the request itself. Must not throw.
  using CommitFn = std::function<void(const std::vector<Request*>&)>;

  // Caps a group, so one transaction (and the wait of its first caller) stays bounded.
  static constexpr std::size_t kMaxGroup = 512;

  // `commit` runs on whichever caller leads a group, one group at a time.
  explicit GroupCommitQueue(CommitFn commit) : commit_(std::move(commit)) {}

  // Enqueues `request` and blocks until a group holding it has been committed (possibly by
  // this caller, as the leader). `request` must stay alive until then, which it does: it is
  // the caller's.
  void submit(Request& request) {
    Waiter self{&request};
    std::unique_lock lock(mu_);
    queue_.push_back(&self);
    cv_.wait(lock, [&] { return self.done || !leading_; });
    if (self.done) return;
    // Leading: self is still queued (only a leader dequeues, and it marks what it took done).
    leading_ = true;
    std::vector<Waiter*> group;
    while (!queue_.empty() && group.size() < kMaxGroup) {
      group.push_back(queue_.front());
      queue_.pop_front();
    }
    lock.unlock();
    std::vector<Request*> requests;
    requests.reserve(group.size());
    for (Waiter* w : group) requests.push_back(w->request);
    commitNoThrow(requests);
    lock.lock();
    for (Waiter* w : group) w->done = true;
    leading_ = false;
    cv_.notify_all();
  }

 private:
  struct Waiter {
    Request* request;
    bool done = false;  // GUARDED_BY(mu_)
  };

  // A throwing commit would strand every waiter of the group: terminate instead.
  void commitNoThrow(const std::vector<Request*>& requests) noexcept { commit_(requests); }

  const CommitFn commit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Waiter*> queue_;  // GUARDED_BY(mu_)
  bool leading_ = false;       // GUARDED_BY(mu_): a group is being committed
};

}  // namespace loom::kernel
