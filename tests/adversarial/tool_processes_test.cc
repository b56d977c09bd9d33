// Tool processes stay bounded ("Hardening", item 5), on the real binary: when loom is
// SIGKILLed in the middle of a tool call, the tool and the grandchild it started die with it.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "cli/loom_process.h"

namespace loom::testing {
namespace {

TEST(ToolProcesses, NoToolOrGrandchildOutlivesASigkilledLoom) {
  TempDir dir;
  std::string pids = dir / "pids";
  std::string tool = dir / "slow";
  writeExecutable(tool, std::string("#!/bin/sh\ncat >/dev/null\nsleep 60 &\necho $$ $! > ") + pids +
                            ".tmp && mv " + pids + ".tmp " + pids + "\nsleep 60\necho '{}'\n");
  std::string script = dir / "s.json";
  std::ofstream(script) << R"({"turns": [{"toolCalls": [{"name": "slow", "arguments": {}}]},
      {"answer": "ok"}]})";
  std::string app = dir / "app.toml";
  std::ofstream(app)
      << "[agent]\nname = \"slow\"\nprompt = \"go\"\n\n[model]\nkind = \"scripted\"\nscript = \""
      << script << "\"\n\n[[tools]]\nname = \"slow\"\ndescription = \"d\"\n"
      << "command = [\"" << tool << "\"]\ntimeoutMillis = 120000\n";
  Child run({"--home", dir / "home", "run", app}, dir);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(pids)) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the tool never started";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_t toolPid = 0, grandchild = 0;
  std::ifstream(pids) >> toolPid >> grandchild;
  ASSERT_TRUE(processRunning(toolPid) && processRunning(grandchild));
  run.kill(SIGKILL);
  run.wait();
  auto gone = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((processRunning(toolPid) || processRunning(grandchild)) &&
         std::chrono::steady_clock::now() < gone) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(processRunning(toolPid)) << "the tool outlived loom";
  EXPECT_FALSE(processRunning(grandchild)) << "the tool's background child outlived loom";
}

}  // namespace
}  // namespace loom::testing
