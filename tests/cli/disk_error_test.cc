// A disk under the home that fails its flushes (EIO from fsync and fdatasync, through a
// preloaded library: tests/support/preload/fsync_fault.cc), with the real binary. The run
// stops without failing (ADR 0023): a step the disk error failed parks it as retrying, the
// process's own write that the failed flush refuses stops it there, naming the run and `loom
// resume`; once the disk flushes again `loom worker` takes it over and completes it, running
// no recorded step again.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

TEST(DiskError, ARunStoppedByAFailingDiskIsTakenOverByAWorkerOnceItFlushesAgain) {
  TempDir dir;
  std::string home = dir / "home";
  std::string witness = dir / "w.txt";
  std::string input = R"({"steps": 4, "sleepMs": 100, "witness": ")" + witness + "\"}";
  const char* bin = std::getenv("LOOM_TEST_BIN_DIR");
  ASSERT_NE(bin, nullptr);
  std::string flag = dir / "disk-fails";
  std::vector<std::string> env{
      "LD_PRELOAD=" + std::string(bin) + "/tests/support/libloom_fsync_fault.so",
      "LOOM_FAULT_FSYNC_WHILE=" + flag, "ASAN_OPTIONS=verify_asan_link_order=0"};
  ASSERT_EQ(runLoom({"--home", home, "run", "example.steps", "--id", "warm", "--input",
                     R"({"steps": 1, "sleepMs": 0})"},
                    dir, env)
                .exitCode,
            0);
  Child run({"--home", home, "run", "example.steps", "--id", "r", "--input", input}, dir, env);
  for (int i = 0; i < 400 && readLines(witness).empty() && !run.exited(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::ofstream{flag};  // the disk fails while the run is on its first steps
  Outcome stopped = run.wait();
  EXPECT_EQ(stopped.exitCode, 1) << stopped.out;
  EXPECT_NE(stopped.err.find("`loom resume r` continues it"), std::string::npos) << stopped.err;
  std::filesystem::remove(flag);

  Outcome log = runLoom({"--home", home, "log", "r", "--json"}, dir);
  EXPECT_EQ(log.out.find("EXECUTION_FAILED"), std::string::npos) << "a disk error failed the run";
  // The step whose witness the disk refused parked the run as retrying; a worker runs it once
  // its retry is due (a run stopped between steps is orphaned, and taken over at once).
  std::string reports;
  for (int i = 0; i < 40 && reports.find("worker: r: completed") == std::string::npos; ++i) {
    Outcome worker = runLoom({"--home", home, "worker", "--once"}, dir, env);
    EXPECT_EQ(worker.exitCode, 0) << worker.out << worker.err;
    reports += worker.out;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_NE(reports.find("worker: r: completed"), std::string::npos) << reports;
  std::vector<std::string> ran = readLines(witness);
  std::map<std::string, int> times;
  for (const auto& line : ran) ++times[line];
  EXPECT_EQ(times.size(), 4u);
  int again = 0;
  for (const auto& [step, n] : times) again += n - 1;
  EXPECT_LE(again, 1) << "only the step whose record the disk refused ran again";
}

}  // namespace
}  // namespace loom::testing
