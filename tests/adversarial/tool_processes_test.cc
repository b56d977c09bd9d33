// Tool processes stay bounded, on the real binary: when loom is
// SIGKILLed in the middle of a tool call, the tool and the grandchild it started die with it;
// so does an MCP server that would not exit by itself, and its child.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

// Starts `loom run app`, waits for the pids file its tool or server writes ("<it> <its
// child>"), SIGKILLs loom there, and expects both processes gone within 5 s.
void expectNothingOutlivesAKilledLoom(const TempDir& dir, const std::string& app,
                                      const std::string& pids, int settleMillis = 0) {
  Child run({"--home", dir / "home", "run", app}, dir);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(pids)) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the process never started";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(settleMillis));
  pid_t process = 0, child = 0;
  std::ifstream(pids) >> process >> child;
  ASSERT_TRUE(processRunning(process) && processRunning(child));
  run.kill(SIGKILL);
  run.wait();
  auto gone = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((processRunning(process) || processRunning(child)) &&
         std::chrono::steady_clock::now() < gone) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(processRunning(process)) << "it outlived loom";
  EXPECT_FALSE(processRunning(child)) << "its background child outlived loom";
  for (pid_t pid : {process, child}) {
    if (processRunning(pid)) ::kill(pid, SIGKILL);
  }
}

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
  expectNothingOutlivesAKilledLoom(dir, app, pids);
}

// An agent app in `dir` whose one tool runs `script` once, then answers.
std::string oneToolApp(const TempDir& dir, const std::string& script) {
  std::string tool = dir / "tool";
  writeExecutable(tool, script);
  std::ofstream(dir / "s.json") << R"({"turns": [{"toolCalls": [{"name": "t", "arguments": {}}]},
      {"answer": "ok"}]})";
  std::string app = dir / "app.toml";
  std::ofstream(app) << "[agent]\nname = \"one\"\nprompt = \"go\"\n\n[model]\nkind = "
                        "\"scripted\"\nscript = \"s.json\"\n\n[[tools]]\nname = \"t\"\n"
                     << "command = [\"" << tool << "\"]\n";
  return app;
}

TEST(ToolProcesses, A200MegabyteStderrKeepsOnlyItsTailAndLoomStaysSmall) {
  TempDir dir;
  std::string app =
      oneToolApp(dir,
                 "#!/bin/sh\ncat >/dev/null\nhead -c 200000000 /dev/zero | tr '\\0' e >&2\n"
                 "echo 'the last line' >&2\nexit 3\n");
  Outcome run = runLoom({"--home", dir / "home", "run", app, "--id", "loud", "--json"}, dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.json().at("status"), "completed") << "the model was told the call failed";
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  EXPECT_LT(usage.ru_maxrss, 150 * 1024) << "KiB: loom buffered the tool's stderr";
  Outcome log = runLoom({"--home", dir / "home", "log", "loud", "--json"}, dir);
  EXPECT_NE(log.out.find("the last line"), std::string::npos) << "the tail is what is kept";
}

TEST(ToolProcesses, AToolThatAnswersAndExitsWhileItsBackgroundChildHoldsStdoutSucceeds) {
  TempDir dir;
  std::string app =
      oneToolApp(dir, "#!/bin/sh\ncat >/dev/null\nsleep 30 &\necho '{\"ok\": true}'\nexit 0\n");
  auto started = std::chrono::steady_clock::now();
  Outcome run = runLoom({"--home", dir / "home", "run", app, "--id", "bg", "--json"}, dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10))
      << "loom waited for the background child instead of the tool";
  Outcome log = runLoom({"--home", dir / "home", "log", "bg", "--json"}, dir);
  EXPECT_NE(log.out.find(R"("output":{"ok":true})"), std::string::npos) << log.out;
  EXPECT_EQ(log.out.find("STEP_FAILED"), std::string::npos) << log.out;
}

// An MCP server that starts a background child, answers a call only after a minute, and does
// not exit when its stdin closes: a hung server.
std::string hungServer(const std::string& pids) {
  return R"(#!/bin/sh
sleep 300 &
echo $$ $! > )" +
         pids + ".tmp && mv " + pids + ".tmp " + pids + R"(
reply() { printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"; }
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      reply "$id" '{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hung","version":"1"}}' ;;
    *'"method":"tools/list"'*)
      reply "$id" '{"tools":[{"name":"wait","inputSchema":{"type":"object"}}]}' ;;
    *'"method":"tools/call"'*)
      sleep 60; reply "$id" '{"content":[{"type":"text","text":"late"}]}' ;;
  esac
done
sleep 300
)";
}

TEST(ToolProcesses, NoMcpServerOrItsChildOutlivesASigkilledLoom) {
  TempDir dir;
  std::string pids = dir / "pids";
  std::string server = dir / "hung.sh";
  writeExecutable(server, hungServer(pids));
  std::string script = dir / "s.json";
  std::ofstream(script) << R"({"turns": [{"toolCalls": [{"name": "wait", "arguments": {}}]},
      {"answer": "ok"}]})";
  std::string app = dir / "app.toml";
  std::ofstream(app)
      << "[agent]\nname = \"mcp\"\nprompt = \"go\"\n\n[model]\nkind = \"scripted\"\nscript = \""
      << script << "\"\n\n[[tools.mcp]]\nname = \"hung\"\ncommand = \"" << server
      << "\"\ntimeoutMillis = 120000\n";
  expectNothingOutlivesAKilledLoom(dir, app, pids, /*settleMillis=*/500);  // into the slow call
}

}  // namespace
}  // namespace loom::testing
