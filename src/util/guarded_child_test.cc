// startGuarded, both ways the guard starts (the loom-guard program, a fork of loom): the command
// gets its stdio, folder and environment and nothing else of loom's; the guard leads the group,
// relays the command's exit status and reports a command that cannot start; in this build the
// guard is the loom-guard program.
#include "util/guarded_child.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "loom/util/error.h"
#include "support/temp_dir.h"
#include "util/unique_fd.h"

namespace loom {
namespace {

struct Finished {
  int status = 0;
  std::string out;
};

// Runs `command` guarded with /dev/null as stdin and a pipe as stdout and stderr; waits.
Finished runGuarded(const GuardedCommand& command, GuardStart how) {
  UniqueFd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  Pipe out = openPipe();
  pid_t guard = startGuarded(command, in.get(), out.write.get(), out.write.get(), how);
  out.write.reset();
  Finished f;
  char buf[4096];
  for (ssize_t n; (n = ::read(out.read.get(), buf, sizeof buf)) > 0;) f.out.append(buf, n);
  EXPECT_EQ(::waitpid(guard, &f.status, 0), guard);
  return f;
}

class GuardedChild : public ::testing::TestWithParam<GuardStart> {};

TEST_P(GuardedChild, TheCommandGetsItsFolderAndEnvironmentAndItsExitStatusIsRelayed) {
  loom::testing::TempDir dir("guarded");
  GuardedCommand c{{"/bin/sh", "-c", "pwd; echo \"$GUARDED_VALUE\"; exit 7"},
                   dir.path(),
                   {{"GUARDED_VALUE", "from loom"}}};
  Finished f = runGuarded(c, GetParam());
  EXPECT_EQ(f.out, std::filesystem::canonical(dir.path()).string() + "\nfrom loom\n");
  ASSERT_TRUE(WIFEXITED(f.status));
  EXPECT_EQ(WEXITSTATUS(f.status), 7);
}

TEST_P(GuardedChild, ACommandKilledByASignalEndsTheGuardByTheSameSignal) {
  Finished f = runGuarded({{"/bin/sh", "-c", "kill -KILL $$"}}, GetParam());
  ASSERT_TRUE(WIFSIGNALED(f.status));
  EXPECT_EQ(WTERMSIG(f.status), SIGKILL);
}

TEST_P(GuardedChild, TheCommandHoldsNoDescriptorOfLoomsButItsStdio) {
  UniqueFd inherited(::open("/dev/null", O_RDONLY));  // not close-on-exec
  ASSERT_GE(inherited.get(), 0);
  Finished f = runGuarded({{"/bin/sh", "-c", "ls /proc/$$/fd"}}, GetParam());
  EXPECT_EQ(f.out, "0\n1\n2\n") << "the shell holds more than its stdio";
}

TEST_P(GuardedChild, ACommandThatCannotStartIsUnavailableAndNamesWhy) {
  UniqueFd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  try {
    startGuarded({{"/nonexistent/tool"}}, in.get(), in.get(), in.get(), GetParam());
    FAIL() << "a missing program started";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/tool': No such file or directory"),
              std::string::npos)
        << e.what();
  }
  loom::testing::TempDir dir("guarded");
  try {
    startGuarded({{"/bin/true"}, dir / "missing"}, in.get(), in.get(), in.get(), GetParam());
    FAIL() << "a command started in a missing folder";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos);
  }
}

TEST_P(GuardedChild, TheGuardLeadsTheCommandsProcessGroup) {
  // /proc/<pid>/stat: pid (comm) state ppid pgrp ...
  Finished f = runGuarded({{"/bin/sh", "-c", "cut -d' ' -f4,5 /proc/$$/stat"}}, GetParam());
  ASSERT_NE(f.out.find(' '), std::string::npos) << f.out;
  long ppid = std::stol(f.out.substr(0, f.out.find(' ')));
  long pgrp = std::stol(f.out.substr(f.out.find(' ') + 1));
  EXPECT_EQ(pgrp, ppid) << "the command's group is not led by its guard";
}

INSTANTIATE_TEST_SUITE_P(BothWays, GuardedChild,
                         ::testing::Values(GuardStart::kProgramIfThere, GuardStart::kFork),
                         [](const auto& info) {
                           return info.param == GuardStart::kFork ? std::string("Forked")
                                                                  : std::string("Program");
                         });

TEST(GuardedChildProgram, InThisBuildTheGuardIsTheLoomGuardProgram) {
  UniqueFd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  pid_t guard = startGuarded({{"/bin/sleep", "10"}}, in.get(), in.get(), in.get());
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(guard) + "/exe", ec);
  ::kill(-guard, SIGKILL);
  ::waitpid(guard, nullptr, 0);
  EXPECT_EQ(exe.filename(), "loom-guard") << exe << ": the guard was forked, not spawned";
}

}  // namespace
}  // namespace loom
