// Test helpers that run the real `loom` binary ($LOOM_TEST_BIN_DIR/loom) as a child process
// (fork/exec), capture its stdout and stderr in files, and can SIGKILL it mid-run. Each test
// gets a fresh temporary folder for its Loom home and witness files. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "loom/json/json.h"
#include "support/temp_dir.h"

namespace loom::testing {

struct Outcome {
  int exitCode = -1;   // when the process exited
  int termSignal = 0;  // when a signal ended it
  std::string out;
  std::string err;
  // The stdout text parsed as exactly one JSON value (test failure otherwise).
  json::value json() const;
  // What the command said went wrong: with --json the "message" of the one value
  // {"error": {"code", "message"}} it printed on stdout (test failure when stderr holds
  // anything but warnings then); without, its stderr.
  std::string error() const;
};

class Child {
 public:
  // Starts `loom args...` with stdout and stderr going to files in `dir`, in this process's
  // environment plus `env` ("NAME=value" entries, which win).
  Child(const std::vector<std::string>& args, const TempDir& dir,
        const std::vector<std::string>& env = {});
  ~Child();  // SIGKILLs and reaps a child nobody waited for
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // True once the child has ended (reaps it).
  bool exited();
  void kill(int signal);
  pid_t pid() const { return pid_; }
  // Waits for the child to end (SIGKILLs it after `timeoutMs`, and the test fails).
  Outcome wait(int timeoutMs = 60'000);
  // What the child has written on stdout so far.
  std::string outSoFar() const;
  // Waits until the child's stdout holds `needle` (the test fails when the child ends first or
  // after `timeoutMs`): a child is ready for a signal only once it says so.
  bool waitForOutput(const std::string& needle, int timeoutMs = 60'000);

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
  std::string outPath_;
  std::string errPath_;
};

std::string loomBinary();
// Runs `loom args...` to completion.
Outcome runLoom(const std::vector<std::string>& args, const TempDir& dir,
                const std::vector<std::string>& env = {});

// Runs each of `commands` (`loom` arguments) as runLoom does: the first alone (it may make the
// home), then up to `parallel` at once; their outcomes in order. For tests that set up many runs (submissions) before what they test.
std::vector<Outcome> runLoomAll(const std::vector<std::vector<std::string>>& commands,
                                const TempDir& dir, const std::vector<std::string>& env = {},
                                std::size_t parallel = 4);
// The lines of a text file (no trailing empty line); empty when the file does not exist.
std::vector<std::string> readLines(const std::string& path);
// The bytes of a file; empty when it does not exist.
std::string fileText(const std::string& path);
// True when any regular file under `folder` holds `needle` (a plaintext grep of a home).
bool folderContains(const std::string& folder, const std::string& needle);
// Writes `text` to `path` and makes it executable by its owner (a tool script).
void writeExecutable(const std::string& path, const std::string& text);
// True while `pid` runs (a zombie waiting for its reaper runs nothing).
bool processRunning(pid_t pid);

}  // namespace loom::testing
