// runSubprocess keeps tool processes bounded: a timeout kills
// the whole process group, grandchildren included; stderr keeps only its tail; stdout over its
// cap is reported as such; a command that exits 0 while a background child holds stdout open
// is done when it exits, not at the deadline.
#include "util/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/loom_process.h"
#include "support/temp_dir.h"

namespace loom {
namespace {

using loom::testing::processRunning;

pid_t pidIn(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

std::string scratch(const std::string& name) {
  static loom::testing::TempDir dir("subprocess");
  return dir / name;
}

TEST(Subprocess, ATimeoutKillsTheWholeGroupGrandchildrenIncluded) {
  std::string pidFile = scratch("grandchild");
  SubprocessOptions o;
  o.timeoutMillis = 300;
  SubprocessResult r =
      runSubprocess({"/bin/sh", "-c", "sleep 30 & echo $! > " + pidFile + "; sleep 30"}, "", o);
  EXPECT_TRUE(r.timedOut);
  pid_t grandchild = pidIn(pidFile);
  ASSERT_GT(grandchild, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(processRunning(grandchild)) << "the backgrounded sleep outlived the timeout";
  std::filesystem::remove(pidFile);
}

TEST(Subprocess, StderrKeepsOnlyItsTail) {
  SubprocessOptions o;
  o.maxStderrBytes = 1000;
  SubprocessResult r = runSubprocess(
      {"/bin/sh", "-c", "head -c 5000000 /dev/zero | tr '\\0' e >&2; echo END >&2; echo 1"}, "", o);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "1\n");
  EXPECT_LE(r.err.size(), 1000u);
  EXPECT_TRUE(r.errTruncated);
  EXPECT_EQ(r.err.substr(r.err.size() - 4), "END\n") << "the tail is what is kept";
}

TEST(Subprocess, StdoutOverItsCapIsReportedAsSuch) {
  SubprocessOptions o;
  o.maxOutputBytes = 1000;
  SubprocessResult r = runSubprocess({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, "", o);
  EXPECT_TRUE(r.outputTooLarge);
  EXPECT_FALSE(r.timedOut);
}

TEST(Subprocess, ABackgroundChildHoldingStdoutDoesNotDelayTheResult) {
  SubprocessOptions o;
  o.timeoutMillis = 10'000;
  auto start = std::chrono::steady_clock::now();
  SubprocessResult r =
      runSubprocess({"/bin/sh", "-c", "sleep 30 & echo '{\"ok\": true}'; exit 0"}, "", o);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "{\"ok\": true}\n");
  EXPECT_LT(took, std::chrono::seconds(5)) << "it waited for the background child";
}

TEST(Subprocess, StdinIsWrittenWholeAndAMissingProgramIsUnavailable) {
  std::string big(1 << 20, 'x');
  SubprocessResult r = runSubprocess({"wc", "-c"}, big);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(std::stoul(r.out), big.size());
  EXPECT_THROW(runSubprocess({"/no/such/program"}, ""), std::exception);
}

}  // namespace
}  // namespace loom
