// `loom worker --isolation process`: each claimed run is run by a `loom resume ID` child
// process of this program, with this process's environment (LOOM_MASTER_KEY included), so
// it boots as a resume by hand would and a run that crashes takes no other run with it. The
// claim is handed over to the child (LOOM_CLAIMED_LEASE), and the child dies with the worker
// (LOOM_WORKER_PID, PR_SET_PDEATHSIG): its run is orphaned with the worker, and another worker
// takes it over.
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "loom/worker/executor.h"

namespace loom::cli {

class ChildRuns : public worker::RunLauncher {
 public:
  // `program` is this binary; `globalArgs` the home and durability each child gets.
  ChildRuns(kernel::EventStore& store, std::string program, std::vector<std::string> globalArgs)
      : store_(store), program_(std::move(program)), globalArgs_(std::move(globalArgs)) {}

  // Throws UnavailableError with the child's stderr when its run did not stop cleanly.
  void run(const kernel::Lease& claim, const kernel::ExecutionInfo& info) override;
  // Stage 1: SIGTERM to every child's process group; stage 2: SIGKILL.
  void interrupt(int stage) override;

 private:
  int spawnAndWait(const kernel::Lease& claim, int errFd);

  kernel::EventStore& store_;
  const std::string program_;
  const std::vector<std::string> globalArgs_;
  std::mutex mu_;
  std::map<std::string, pid_t> children_;  // GUARDED_BY(mu_)
  int killing_ = 0;                        // GUARDED_BY(mu_): the signal interrupt sent
};

}  // namespace loom::cli
