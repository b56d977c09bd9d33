// One running MCP server and its JSON-RPC 2.0 session over newline-delimited stdio. A reader
// thread reads the server's stdout and demultiplexes answers to the waiting requests by id; it
// answers server requests Loom does not support with a JSON-RPC error ("ping" with an empty
// result), ignores notifications, and keeps the last 16 KiB of stderr for error messages.
//
// Once broken, a connection stays broken and every request fails with the recorded error:
// the server exited or closed stdout (UnavailableError), wrote a line that is not JSON or
// longer than 64 MiB (DataLossError; the process is killed), or a write to its stdin failed.
// A request that is not answered in time fails with DeadlineExceededError and is cancelled
// (notifications/cancelled); the connection stays usable. McpClient replaces a broken one.
//
// Thread-safety: request, notify, broken, pid and stderrTail may be called from any thread,
// concurrently; stop (and the destructor) from any thread but the reader.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "loom/json/json.h"
#include "loom/providers/mcp_client.h"
#include "loom/util/error.h"
#include "mcp_process.h"
#include "util/unique_fd.h"

namespace loom::providers {

class McpConnection {
 public:
  // Starts the server process and the reader; sends nothing. Throws UnavailableError when the
  // process cannot be started.
  explicit McpConnection(const McpServerOptions& options);
  ~McpConnection();
  McpConnection(const McpConnection&) = delete;
  McpConnection& operator=(const McpConnection&) = delete;

  // Sends request `method` and returns its "result". Throws InvalidArgumentError for a
  // JSON-RPC error answer (with the server's code and message), DeadlineExceededError after
  // `timeoutMillis` without an answer, and the broken connection's error when it breaks.
  json::value request(std::string_view method, json::value params, int64_t timeoutMillis);

  // Sends notification `method` (no params member when `params` is null). Throws like
  // request when the write fails.
  void notify(std::string_view method, json::value params, int64_t timeoutMillis);

  bool broken() const;
  // The session now serves runs' calls (after initialize and tools/list): from then on, a
  // server that exits is said to be started again by the next call; before, that it exited
  // while Loom was starting it.
  void markServing() { serving_ = true; }
  // Ends the session and the process (McpProcess::stop(graceMillis)); pending requests fail
  // with UnavailableError. Idempotent.
  void stop(int64_t graceMillis);

  int pid() const { return process_.pid(); }
  // The last bytes the server wrote to stderr.
  std::string stderrTail() const;

 private:
  struct Pending {
    bool done = false;
    json::object response;
  };

  void write(const std::string& line, int64_t timeoutMillis);
  void readLoop();
  void readStdout(std::string& buffer, bool& open);
  void readStderr(bool& open);
  void dispatch(std::string_view line);
  void handle(const json::value& message);
  void answerServerRequest(const json::value& id, std::string_view method);
  void breakWith(ErrorCode code, std::string message);
  void onStdoutClosed();
  [[noreturn]] void throwBroken() const;  // requires mu_ held and broken_ set
  std::string stderrHint() const;         // requires mu_ held

  std::string server_;
  std::atomic<bool> serving_{false};
  McpProcess process_;
  Pipe wake_;  // the reader also polls wake_.read; stop writes to wake_.write
  std::thread reader_;
  std::mutex stopMu_;
  bool stopped_ = false;  // GUARDED_BY(stopMu_)

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, Pending*> pending_;                      // GUARDED_BY(mu_)
  int64_t nextId_ = 1;                                       // GUARDED_BY(mu_)
  std::optional<std::pair<ErrorCode, std::string>> broken_;  // GUARDED_BY(mu_)
  std::string stderr_;                                       // GUARDED_BY(mu_)
};

}  // namespace loom::providers
