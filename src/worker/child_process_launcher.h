// A RunLauncher that runs each claimed run in a child process (`loom worker --isolation
// process`): a `<program> <args> resume ID` child (this program, as a command line), with this process's environment (LOOM_MASTER_KEY included), so
// it boots as a resume by hand would and a run that crashes takes no other run with it. The
// claim is handed over to the child (LOOM_CLAIMED_LEASE), and the child dies with the worker
// (LOOM_WORKER_PID, PR_SET_PDEATHSIG): its run is orphaned with the worker, and another worker
// takes it over.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include "loom/worker/executor.h"

namespace loom::worker {

class ChildProcessLauncher : public RunLauncher {
 public:
  // `program` is this binary (a `loom` command line); `globalArgs` the home and durability
  // each child gets before `resume ID`.
  ChildProcessLauncher(kernel::EventStore& store, std::string program, std::vector<std::string> globalArgs)
      : store_(store), program_(std::move(program)), globalArgs_(std::move(globalArgs)) {}

  // Throws UnavailableError with the child's stderr when its run did not stop cleanly.
  std::optional<workflow::RunResult> run(const kernel::Lease& claim,
                                         const kernel::ExecutionInfo& info) override;
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

// In a run's child: when a worker started this process, takes the claim it handed over
// (LOOM_CLAIMED_LEASE), removes both variables from the environment the run's tools see, and
// makes this process die with the worker (PR_SET_PDEATHSIG); exits at once when the worker died
// already. nullopt, and nothing done, in any other process. Call first thing in main().
std::optional<kernel::ClaimedLease> takeClaimFromWorker();

}  // namespace loom::worker
