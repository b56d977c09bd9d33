// A bounded fan-out for erasure's I/O-bound loops (scanning other executions' logs, deleting
// blobs): runs body(i) for i = 0 .. count-1 on up to `concurrency` threads (the caller's
// among them), each index once, until body returns false or one throws. The first exception
// is rethrown after every thread has stopped; indexes not started by then are never run.
// Private to the compliance module. body must be safe to call from several threads at once.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace loom::compliance::detail {

inline void forEachIndexInParallel(std::size_t count, int concurrency,
                                   const std::function<bool(std::size_t)>& body) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex failureMu;
  std::exception_ptr failure;  // GUARDED_BY(failureMu)
  auto work = [&] {
    try {
      while (!stop.load(std::memory_order_relaxed)) {
        std::size_t i = next.fetch_add(1);
        if (i >= count) return;
        if (!body(i)) stop = true;
      }
    } catch (...) {  // recorded, and rethrown by the caller's thread below
      std::lock_guard lock(failureMu);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  std::size_t helpers = std::min<std::size_t>(count, std::max(concurrency, 1)) - (count > 0);
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (std::size_t t = 0; t < helpers; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace loom::compliance::detail
