// ownerIsDeadHere: a lease's owner counts as dead only when that is proven on this host:
// same boot and pid namespace, and its pid gone, a zombie, or reused by a later process.
#include "loom/kernel/lease.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace loom::kernel {
namespace {

// A child process that waits until it is killed; the owner it would present.
struct Sleeper {
  Sleeper() {
    pid = ::fork();
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
    owner = processLeaseOwner();
    owner.id = "child";
    owner.pid = pid;
  }
  ~Sleeper() {
    if (!reaped) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  pid_t pid;
  LeaseOwner owner;
  bool reaped = false;
};

TEST(LeaseOwners, AnOwnerIsDeadOnlyWhenThatIsProvenHere) {
  Sleeper child;
  LeaseOwner self = processLeaseOwner();
  EXPECT_FALSE(self.pidNamespace.empty());
  EXPECT_GT(self.startTicks, 0);
  // Its start time, as ownerIsDeadHere reads it, is later than or equal to ours.
  child.owner.startTicks = 0;
  EXPECT_FALSE(ownerIsDeadHere(child.owner)) << "a live process";

  LeaseOwner reused = child.owner;
  reused.startTicks = 1;  // the pid now belongs to a process started at another time
  EXPECT_TRUE(ownerIsDeadHere(reused));

  LeaseOwner elsewhere = reused;
  elsewhere.pidNamespace = "pid:[1]";
  EXPECT_FALSE(ownerIsDeadHere(elsewhere)) << "another pid namespace: its pid means nothing";
  elsewhere = reused;
  elsewhere.host = "another-host";
  EXPECT_FALSE(ownerIsDeadHere(elsewhere));
  elsewhere = reused;
  elsewhere.bootId = "another-boot";
  EXPECT_FALSE(ownerIsDeadHere(elsewhere));

  ::kill(child.pid, SIGKILL);
  for (int i = 0; i < 200 && !ownerIsDeadHere(child.owner); ++i) ::usleep(5'000);
  EXPECT_TRUE(ownerIsDeadHere(child.owner)) << "a zombie (killed, not yet reaped) is dead";
  ::waitpid(child.pid, nullptr, 0);
  child.reaped = true;
  EXPECT_TRUE(ownerIsDeadHere(child.owner)) << "a pid that is gone";
  EXPECT_FALSE(ownerIsDeadHere(self)) << "this process";
}

}  // namespace
}  // namespace loom::kernel
