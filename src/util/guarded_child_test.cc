// startGuarded, both ways the guard starts (the loom-guard program, a fork of loom): the command
// gets its stdio, folder and environment and nothing else of loom's; the guard leads the group,
// leaves the stop signals sent to it to the command, relays the command's exit status, reports a
// command that cannot start and kills the group when loom dies; in this build the guard is the
// loom-guard program, and an installed loom-guard of another protocol makes loom fork its own.
#include "util/guarded_child.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "loom/util/error.h"
#include "support/loom_process.h"
#include "support/temp_dir.h"
#include "util/guard_process.h"
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
  // `; exit 0`: a shell that would exec its last command (bash) lists its own descriptors too.
  Finished f = runGuarded({{"/bin/sh", "-c", "ls /proc/$$/fd; exit 0"}}, GetParam());
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

TEST_P(GuardedChild, TheStopSignalsSentToTheGroupAreLeftToTheCommand) {
  // The command signals its whole group; the guard lives on and reports the command's exit.
  Finished f = runGuarded({{"/bin/sh", "-c", "trap 'exit 5' TERM; kill -TERM 0; sleep 5; exit 1"}},
                          GetParam());
  ASSERT_TRUE(WIFEXITED(f.status)) << "the guard died of the group's SIGTERM";
  EXPECT_EQ(WEXITSTATUS(f.status), 5);
}

TEST_P(GuardedChild, KillingLoomKillsTheCommandAndWhatItStarted) {
  Pipe told = openPipe();
  pid_t loom = ::fork();  // stands for loom: starts the command, then is SIGKILLed
  ASSERT_GE(loom, 0);
  if (loom == 0) {
    UniqueFd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    startGuarded({{"/bin/sh", "-c", "sleep 60 & echo $!; sleep 60"}}, in.get(), told.write.get(),
                 in.get(), GetParam());
    ::pause();
    ::_exit(0);
  }
  told.write.reset();
  std::string line;
  char c;
  while (::read(told.read.get(), &c, 1) == 1 && c != '\n') line += c;
  ASSERT_FALSE(line.empty()) << "the command did not start";
  pid_t grandchild = std::stoi(line);
  ASSERT_TRUE(loom::testing::processRunning(grandchild));
  ::kill(loom, SIGKILL);
  ::waitpid(loom, nullptr, 0);
  for (int i = 0; i < 100 && loom::testing::processRunning(grandchild); ++i) ::usleep(50'000);
  EXPECT_FALSE(loom::testing::processRunning(grandchild)) << "the command's child outlived loom";
}

INSTANTIATE_TEST_SUITE_P(BothWays, GuardedChild,
                         ::testing::Values(GuardStart::kProgramIfThere, GuardStart::kFork),
                         [](const auto& info) {
                           return info.param == GuardStart::kFork ? std::string("Forked")
                                                                  : std::string("Program");
                         });

// The program the guard of a guarded `sleep` runs as.
std::filesystem::path guardExecutable() {
  UniqueFd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  pid_t guard = startGuarded({{"/bin/sleep", "10"}}, in.get(), in.get(), in.get());
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(guard) + "/exe", ec);
  ::kill(-guard, SIGKILL);
  ::waitpid(guard, nullptr, 0);
  return exe;
}

TEST(GuardedChildProgram, InThisBuildTheGuardIsTheLoomGuardProgram) {
  auto exe = guardExecutable();
  EXPECT_EQ(exe.filename(), "loom-guard") << exe << ": the guard was forked, not spawned";
}

TEST(GuardedChildProgram, AGuardGivenAnotherProtocolRefusesSoLoomForksItsOwn) {
  auto guard = guardExecutable();
  ASSERT_EQ(guard.filename(), "loom-guard");
  Pipe report = openPipe();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(report.write.get(), 3);
    ::execl(guard.c_str(), "loom-guard", "loom-guard-0", "1", "", "/bin/true", "true", nullptr);
    ::_exit(126);
  }
  report.write.reset();
  int said = 0;
  EXPECT_EQ(::read(report.read.get(), &said, sizeof said), static_cast<ssize_t>(sizeof said));
  EXPECT_EQ(said, kGuardRefused) << "what makes startGuarded fork its own guard";
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}

// Loom's side of a refusal, end to end: a copy of this test program installed at <prefix>/bin
// finds <prefix>/libexec/loom/loom-guard, which answers as a guard of another protocol does
// (kGuardRefused on descriptor 3, exit 127); startGuarded forks its own guard and the command
// runs. The copy runs this same test with LOOM_GUARD_REFUSAL_CHILD set: it runs the command and
// prints what the command wrote.
TEST(GuardedChildProgram, ACommandRunsWhenTheInstalledGuardRefusesItsProtocol) {
  if (std::getenv("LOOM_GUARD_REFUSAL_CHILD") != nullptr) {
    Finished f =
        runGuarded({{"/bin/sh", "-c", "echo the command ran"}}, GuardStart::kProgramIfThere);
    std::printf("child: %s", f.out.c_str());
    std::printf("status: %d\n", WIFEXITED(f.status) ? WEXITSTATUS(f.status) : -1);
    return;
  }
  loom::testing::TempDir dir;
  auto prefix = dir.path() / "prefix";
  std::filesystem::create_directories(prefix / "bin");
  std::filesystem::create_directories(prefix / "libexec" / "loom");
  auto self = std::filesystem::read_symlink("/proc/self/exe");
  auto copy = prefix / "bin" / "guard-refusal-test";
  std::filesystem::copy_file(self, copy);
  auto guard = prefix / "libexec" / "loom" / "loom-guard";
  auto ran = dir.path() / "the refusing guard ran";
  std::ofstream(guard) << "#!/bin/sh\n: > '" << ran.string()
                       << "'\nprintf '\\377\\377\\377\\377' >&3\nexit 127\n";
  std::filesystem::permissions(
      guard, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                 std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                 std::filesystem::perms::others_exec);
  std::string command = "LOOM_GUARD_REFUSAL_CHILD=1 '" + copy.string() +
                        "' --gtest_filter=GuardedChildProgram.ACommandRunsWhenTheInstalledGuard"
                        "RefusesItsProtocol 2>&1";
  FILE* child = ::popen(command.c_str(), "r");
  ASSERT_NE(child, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, child)) > 0;) out.append(buf, n);
  ::pclose(child);
  EXPECT_TRUE(std::filesystem::exists(ran)) << "the installed guard was not tried:\n" << out;
  EXPECT_NE(out.find("child: the command ran\nstatus: 0\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace loom
