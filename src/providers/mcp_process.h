// One MCP server process: started guarded (util/guarded_child.h: its own process group, killed
// with everything it started when loom dies, SIGKILL included), with pipes for stdin, stdout
// and stderr (all close-on-exec on Loom's side). McpConnection reads stdout and
// stderr; this class writes stdin with a deadline and ends the process: close stdin, wait,
// SIGTERM the group, wait, SIGKILL the group. Killing the group also ends what a launcher such
// as npx started. Thread-safety: writeAll is called by one thread at a time (the connection's
// write lock or its own); exitDescription, signalGroup and stop from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/unique_fd.h"

namespace loom::providers {

class McpProcess {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  // Starts argv[0] (looked up on PATH) with `env` added to the inherited environment, in
  // `workingDirectory` when not empty. Throws UnavailableError naming `server` when it cannot
  // be started.
  McpProcess(std::string server, const std::vector<std::string>& argv,
             const std::map<std::string, std::string>& env, const std::string& workingDirectory,
             bool inheritEnv = true);
  // Stops the process (stop(0)) if it still runs.
  ~McpProcess();
  McpProcess(const McpProcess&) = delete;
  McpProcess& operator=(const McpProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdoutFd() const { return out_.get(); }
  int stderrFd() const { return err_.get(); }

  // Writes all of `data` to the server's stdin. Throws UnavailableError when stdin is closed
  // (the server exited) and DeadlineExceededError when the server does not read it before
  // `deadline`.
  void writeAll(std::string_view data, Deadline deadline);

  // "exited with status N" / "was killed by signal N" once the process has ended (waiting at
  // most `waitMillis` for it), nullopt while it runs. Reaps the process once.
  std::optional<std::string> exitDescription(int64_t waitMillis);

  // Sends `sig` to the process group while its leader has not been reaped.
  void signalGroup(int sig);

  // Ends the process: closes stdin and waits up to `graceMillis` for it to exit, then sends
  // SIGTERM to its group and waits up to `graceMillis` again, then SIGKILL. Idempotent.
  void stop(int64_t graceMillis);

 private:
  std::string server_;
  pid_t pid_ = -1;
  UniqueFd in_;         // GUARDED_BY(writeMu_): our end of the server's stdin; reset once closed
  UniqueFd out_;        // our end of its stdout (read by the connection)
  UniqueFd err_;        // our end of its stderr
  std::mutex writeMu_;  // held by writeAll; stop takes it to close stdin
  std::atomic<bool> stopping_{false};  // set by stop; a blocked writer gives up on it
  std::mutex mu_;
  std::optional<std::string> ended_;  // GUARDED_BY(mu_): how it ended, once reaped
};

}  // namespace loom::providers
