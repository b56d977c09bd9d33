#include "lent_writer.h"

#include <algorithm>
#include <iterator>

#include "loom/util/error.h"

namespace loom::kernel {
namespace {

// Set while this thread runs a lent write for its group (LentWriter::run refuses to nest).
thread_local bool tRunningLentWrite = false;

std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace

void runLentWrite(sqlite::Db& writer, const std::function<void(sqlite::Db&)>& write) {
  tRunningLentWrite = true;
  try {
    write(writer);
  } catch (...) {
    tRunningLentWrite = false;
    throw;
  }
  tRunningLentWrite = false;
}

bool LentWriter::run(const std::function<void(sqlite::Db&)>& write) {
  if (tRunningLentWrite) {  // it would wait for the group that runs it
    throw InternalError("a lent write cannot run another write on the writer it borrows");
  }
  std::shared_lock lock(mu_);
  if (!submit_) return false;
  submit_(write);
  return true;
}

bool LentWriter::stage(std::string key, std::function<void(sqlite::Db&)> write,
                       std::function<void(std::exception_ptr)> done,
                       std::function<bool(sqlite::Db&)> touchIfPresent) {
  std::shared_lock lock(mu_);
  if (!stage_) return false;
  stage_(StagedWrite{std::move(key), std::move(write), std::move(done), std::move(touchIfPresent),
                     nullptr, 0});
  return true;
}

void LentWriter::close() {
  std::unique_lock lock(mu_);
  submit_ = nullptr;
  stage_ = nullptr;
}

void StagedWrites::add(StagedWrite write) {
  std::lock_guard lock(mu_);
  queued_.push_back(std::move(write));
}

bool StagedWrites::empty() const {
  std::lock_guard lock(mu_);
  return queued_.empty();
}

void StagedWrites::dropAll(const std::exception_ptr& error) {
  std::vector<StagedWrite> dropped;
  {
    std::lock_guard lock(mu_);
    dropped.swap(queued_);
  }
  for (StagedWrite& w : dropped) {
    if (w.done) w.done(error);
  }
}

std::vector<StagedWrite>& StagedWrites::takeForGroup() {
  std::lock_guard lock(mu_);
  group_.swap(queued_);
  return group_;
}

void StagedWrites::finishGroup(const std::exception_ptr& groupError) {
  std::vector<StagedWrite> again;
  for (StagedWrite& w : group_) {
    if (groupError && !w.error) {
      if (++w.groupsFailed < kStagedWriteGroups) {
        again.push_back(std::move(w));
        continue;
      }
      w.error = groupError;
      lose(w);
    }
    if (w.done) w.done(w.error);
  }
  group_.clear();
  // Keys found present after all are forgotten once that presence is committed.
  for (auto it = lost_.begin(); it != lost_.end();) {
    if (it->second.foundInGroup && !groupError) {
      it = lost_.erase(it);
    } else {
      it->second.foundInGroup = false;
      ++it;
    }
  }
  if (again.empty()) return;
  std::lock_guard lock(mu_);
  queued_.insert(queued_.begin(), std::make_move_iterator(again.begin()),
                 std::make_move_iterator(again.end()));
}

void StagedWrites::refuseCitingLost(const std::string& executionId, const AppendPlan& plan,
                                    const std::string& path, sqlite::Db& writer) {
  for (auto it = lost_.begin(); it != lost_.end();) {
    const std::string& key = it->first;  // not a structured binding: the lambda captures it
    const Lost& lost = it->second;
    auto cites = [&](const std::string& text) { return text.find(key) != std::string::npos; };
    if (std::none_of(plan.texts.begin(), plan.texts.end(), cites)) {
      ++it;
      continue;
    }
    if (lost.touchIfPresent && lost.touchIfPresent(writer)) {  // there after all, touched
      it->second.foundInGroup = true;
      ++it;
      continue;
    }
    const std::exception_ptr& error = lost.error;
    for (std::size_t i = 0; i < plan.texts.size(); ++i) {
      if (!cites(plan.texts[i])) continue;
      const Event& event = plan.events[i];
      auto stepId = event.data.find("stepId");
      std::string what = stepId != event.data.end() && stepId->value().is_string()
                             ? "step '" + std::string(stepId->value().as_string()) + "'"
                             : "its " + std::string(eventTypeName(event.type)) + " event";
      throw ContentStoreUnavailableError(
          "execution '" + executionId + "': " + what + " was not recorded: it cites blob " + key +
          ", which could not be written to '" + path + "' with it (" + describe(error) +
          "); once the store can be written, `loom resume " + executionId +
          "` runs the step again");
    }
  }
}

}  // namespace loom::kernel
