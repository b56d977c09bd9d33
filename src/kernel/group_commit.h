// Group commit for the event stores (leveldb's writer queue, with PostgreSQL's commit_delay):
// each writer enqueues its request; the first one not behind a running commit becomes the
// leader, takes every request queued so far and commits them together (SQLite: one transaction,
// one fsync; PostgreSQL: one statement, one commit) while the next ones queue up behind it.
// Each caller returns only once the group holding its request is done, so merging never
// weakens durability.
// Wake-ups are per waiter: a finished group wakes its own callers and hands leadership to the
// first request queued behind it, never every waiter (a notify_all made 64 concurrent runs
// spend a third of their time switching threads).
// At low concurrency the commits of a few runs alternate and a group would hold one request:
// when other threads submitted recently (siblings), a new leader waits a little — at most half
// its last commit's duration, capped at kMaxGatherMicros — for them to queue, so two runs share
// commits. A lone writer never waits. Thread-safe.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
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
  // The longest a leader waits for siblings to queue.
  static constexpr int64_t kMaxGatherMicros = 400;

  // `commit` runs on whichever caller leads a group, one group at a time.
  explicit GroupCommitQueue(CommitFn commit) : commit_(std::move(commit)) {}

  // Enqueues `request` and blocks until a group holding it has been committed (possibly by
  // this caller, as the leader). `request` must stay alive until then, which it does: it is
  // the caller's.
  void submit(Request& request) {
    Waiter self{&request};
    std::unique_lock lock(mu_);
    std::size_t siblings = noteSubmitter(Clock::now());
    queue_.push_back(&self);
    if (gathering_) gathered_.notify_one();
    for (;;) {
      if (leading_) {
        self.cv.wait(lock, [&] { return self.done || self.lead; });
        if (self.done) return;
      }
      self.lead = false;
      lead(lock, siblings);
      if (self.done) return;
      // More than kMaxGroup were queued ahead of this request: wait for the next group.
    }
  }

 private:
  using Clock = std::chrono::steady_clock;

  struct Waiter {
    Request* request;
    bool done = false;  // GUARDED_BY(mu_)
    bool lead = false;  // GUARDED_BY(mu_): handed leadership
    std::condition_variable cv;
  };

  // Records this thread's submission; returns how many other threads submitted within the
  // last few commit durations (runs committing beside this one).
  std::size_t noteSubmitter(Clock::time_point now) {
    auto window = std::max<Clock::duration>(lastCommit_ * 4, std::chrono::milliseconds(1));
    lastSubmit_[std::this_thread::get_id()] = now;
    std::size_t siblings = 0;
    for (auto it = lastSubmit_.begin(); it != lastSubmit_.end();) {
      if (now - it->second > window * 8) {
        it = lastSubmit_.erase(it);  // a thread that stopped submitting
        continue;
      }
      if (now - it->second <= window && it->first != std::this_thread::get_id()) ++siblings;
      ++it;
    }
    return siblings;
  }

  // Commits one group from the front of the queue, wakes its callers and hands leadership to
  // the first request left queued.
  void lead(std::unique_lock<std::mutex>& lock, std::size_t siblings) {
    leading_ = true;  // stays set while leadership is handed on
    gather(lock, siblings);
    std::vector<Waiter*> group;
    std::vector<Request*> requests;
    group.reserve(std::min(queue_.size(), kMaxGroup));  // nothing throws once requests leave
    requests.reserve(group.capacity());
    while (!queue_.empty() && group.size() < kMaxGroup) {
      group.push_back(queue_.front());
      queue_.pop_front();
    }
    lock.unlock();
    for (Waiter* w : group) requests.push_back(w->request);
    Clock::time_point started = Clock::now();
    commitNoThrow(requests);
    lock.lock();
    lastCommit_ = Clock::now() - started;
    for (Waiter* w : group) {
      w->done = true;
      w->cv.notify_one();
    }
    if (queue_.empty()) {
      leading_ = false;
    } else {
      queue_.front()->lead = true;
      queue_.front()->cv.notify_one();
    }
  }

  // As the new leader: waits (bounded) until the siblings have queued too.
  void gather(std::unique_lock<std::mutex>& lock, std::size_t siblings) {
    if (siblings == 0 || queue_.size() > siblings) return;
    auto budget =
        std::min<Clock::duration>(lastCommit_ / 2, std::chrono::microseconds(kMaxGatherMicros));
    gathering_ = true;
    gathered_.wait_for(lock, budget, [&] { return queue_.size() > siblings; });
    gathering_ = false;
  }

  // A throwing commit would strand every waiter of the group: terminate instead.
  void commitNoThrow(const std::vector<Request*>& requests) noexcept { commit_(requests); }

  const CommitFn commit_;
  std::mutex mu_;
  std::condition_variable gathered_;  // a leader gathering siblings waits here
  std::deque<Waiter*> queue_;         // GUARDED_BY(mu_)
  bool leading_ = false;              // GUARDED_BY(mu_): a group is being gathered or committed
  bool gathering_ = false;            // GUARDED_BY(mu_)
  Clock::duration lastCommit_{};      // GUARDED_BY(mu_)
  std::unordered_map<std::thread::id, Clock::time_point> lastSubmit_;  // GUARDED_BY(mu_)
};

}  // namespace loom::kernel
