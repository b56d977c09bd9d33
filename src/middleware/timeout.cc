#include "loom/middleware/timeout.h"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "loom/effects/task.h"
#include "loom/util/error.h"

namespace loom::middleware {
namespace {

// Shared by the caller and the helper thread; the last of the two to finish frees it.
struct Call {
  Call(const effects::EffectContext& c, json::value in, const effects::Next& n)
      : ctx(c), input(std::move(in)), next(n) {}
  effects::EffectContext ctx;  // a copy: the caller's may be gone when the helper runs
  json::value input;
  effects::Next next;
  std::mutex mu;
  std::condition_variable cv;
  bool started = false;               // GUARDED_BY(mu)
  bool abandoned = false;             // GUARDED_BY(mu)
  bool done = false;                  // GUARDED_BY(mu)
  std::optional<json::value> result;  // GUARDED_BY(mu)
  std::exception_ptr error;           // GUARDED_BY(mu)
};

void runCall(const std::shared_ptr<Call>& call, const WarnSink& onWarn, int64_t ms) {
  {
    std::lock_guard lock(call->mu);
    if (call->abandoned) return;  // timed out before this thread got to run: never start
    call->started = true;
  }
  std::optional<json::value> result;
  std::exception_ptr error;
  try {
    result = call->next(call->ctx, std::move(call->input));
  } catch (...) {
    error = std::current_exception();  // handed to the caller, or reported below
  }
  std::unique_lock lock(call->mu);
  if (call->abandoned) {
    lock.unlock();
    std::string what = "returned a result, which was discarded";
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        what = std::string("failed: ") + e.what();
      } catch (...) {
        what = "failed with a non-standard exception";  // reported here, not swallowed
      }
    }
    warn(onWarn, "effect '" + call->ctx.effectId + "' (step '" + call->ctx.stepId +
                     "') finished after its " + std::to_string(ms) + " ms timeout and " + what);
    return;
  }
  call->result = std::move(result);
  call->error = error;
  call->done = true;
  call->cv.notify_one();
}

}  // namespace

TimeoutMiddleware::TimeoutMiddleware(TimeoutConfig config, WarnSink onWarn)
    : config_(config), onWarn_(std::move(onWarn)) {
  ConfigIssues issues = validateTimeoutConfig(config_, "timeout");
  if (!issues.empty()) throw ConfigError("invalid timeout middleware:\n" + formatIssues(issues));
}

json::value TimeoutMiddleware::invoke(const effects::EffectContext& ctx, json::value input,
                                      const effects::Next& next) {
  if (ctx.taskKind == effects::kKindFlow) return next(ctx, std::move(input));
  auto call = std::make_shared<Call>(ctx, std::move(input), next);
  std::thread(runCall, call, onWarn_, config_.ms).detach();
  std::unique_lock lock(call->mu);
  if (call->cv.wait_for(lock, std::chrono::milliseconds(config_.ms), [&] { return call->done; })) {
    if (call->error) std::rethrow_exception(call->error);
    return std::move(*call->result);
  }
  call->abandoned = true;
  throw DeadlineExceededError(
      "effect '" + ctx.effectId + "' took longer than its " + std::to_string(config_.ms) +
      " ms timeout" +
      (call->started ? " and was abandoned (it may still be running in the background)"
                     : " before it could start; it was not run") +
      "; raise the timeout middleware's ms or make the effect faster");
}

std::string TimeoutMiddleware::describe() const {
  return "timeout(ms = " + std::to_string(config_.ms) + ")";
}

}  // namespace loom::middleware
