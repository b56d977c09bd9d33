// Marks each execution as running in this process while a run of it goes on here, so a second
// concurrent run of the same id in this process is refused before it reads anything.
// Thread-safe.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include "loom/util/error.h"

namespace loom::workflow {

class ActiveSet {
 public:
  class Guard {
   public:
    Guard(ActiveSet& set, std::string id) : set_(set), id_(std::move(id)) {}
    ~Guard() {
      std::lock_guard lock(set_.mu_);
      set_.ids_.erase(id_);
    }

   private:
    ActiveSet& set_;
    std::string id_;
  };

  Guard enter(const std::string& id) {
    std::lock_guard lock(mu_);
    if (!ids_.insert(id).second) {
      throw FailedPreconditionError("execution '" + id +
                                    "' is already running in this process");
    }
    return Guard(*this, id);
  }

 private:
  std::mutex mu_;
  std::set<std::string> ids_;  // GUARDED_BY(mu_)
};

}  // namespace loom::workflow
