#include "mcp_connection.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace loom::providers {
namespace {

constexpr std::size_t kMaxLineBytes = 64u << 20;
constexpr std::size_t kMaxStderrBytes = 16u << 10;
constexpr std::size_t kStderrHintChars = 1000;
constexpr int kMethodNotFound = -32601;

std::string clip(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max)) + "…";
}

std::vector<std::string> argvOf(const McpServerOptions& options) {
  std::vector<std::string> argv{options.command};
  argv.insert(argv.end(), options.args.begin(), options.args.end());
  return argv;
}

std::chrono::steady_clock::time_point deadlineIn(int64_t millis) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(millis);
}

}  // namespace

McpConnection::McpConnection(const McpServerOptions& options)
    : server_(options.name),
      process_(options.name, argvOf(options), options.env, options.workingDirectory,
               options.inheritEnv) {
  wake_ = openPipe();
  reader_ = std::thread([this] { readLoop(); });
}

McpConnection::~McpConnection() { stop(0); }

void McpConnection::stop(int64_t graceMillis) {
  std::lock_guard stopLock(stopMu_);
  if (stopped_) return;
  stopped_ = true;
  breakWith(ErrorCode::kUnavailable, "MCP server '" + server_ + "' was stopped by its client");
  process_.stop(graceMillis);
  char x = 'x';
  while (::write(wake_.write.get(), &x, 1) < 0 && errno == EINTR) {
  }
  if (reader_.joinable()) reader_.join();
}

bool McpConnection::broken() const {
  std::lock_guard lock(mu_);
  return broken_.has_value();
}

std::string McpConnection::stderrTail() const {
  std::lock_guard lock(mu_);
  return stderr_;
}

std::string McpConnection::stderrHint() const {
  if (stderr_.empty()) return "";
  std::string_view tail(stderr_);
  if (tail.size() > kStderrHintChars) tail = tail.substr(tail.size() - kStderrHintChars);
  return "; its stderr ends with: " + std::string(tail);
}

void McpConnection::breakWith(ErrorCode code, std::string message) {
  std::lock_guard lock(mu_);
  if (!broken_) broken_.emplace(code, std::move(message));
  cv_.notify_all();
}

void McpConnection::throwBroken() const {
  const auto& [code, message] = *broken_;
  switch (code) {
    case ErrorCode::kDataLoss:
      throw DataLossError(message);
    case ErrorCode::kDeadlineExceeded:
      throw DeadlineExceededError(message);
    default:
      throw UnavailableError(message);
  }
}

void McpConnection::write(const std::string& line, int64_t timeoutMillis) {
  {
    std::lock_guard lock(mu_);
    if (broken_) throwBroken();
  }
  try {
    process_.writeAll(line, deadlineIn(timeoutMillis));
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kUnavailable && !serving_) {
      // Gone while Loom starts it: the reader is about to say how it ended (its exit status,
      // its stderr), which says more than the broken pipe.
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1), [this] { return broken_.has_value(); });
      if (broken_) throwBroken();
    }
    // A line may be half written: nothing after it would be understood.
    breakWith(e.code() == ErrorCode::kDeadlineExceeded ? e.code() : ErrorCode::kUnavailable,
              e.what());
    throw;
  }
}

json::value McpConnection::request(std::string_view method, json::value params,
                                   int64_t timeoutMillis) {
  auto deadline = deadlineIn(timeoutMillis);
  Pending pending;
  int64_t id = 0;
  {
    std::lock_guard lock(mu_);
    if (broken_) throwBroken();
    id = nextId_++;
    pending_[id] = &pending;
  }
  json::object message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  try {
    write(json::toText(message) + "\n", timeoutMillis);
  } catch (const Error&) {
    std::lock_guard lock(mu_);
    pending_.erase(id);
    throw;
  }
  std::unique_lock lock(mu_);
  cv_.wait_until(lock, deadline, [&] { return pending.done || broken_.has_value(); });
  pending_.erase(id);
  if (pending.done) {
    if (const auto* error = pending.response.if_contains("error")) {
      const auto* e = error->if_object();
      std::string code = e && e->contains("code") ? json::toText(e->at("code")) : "?";
      std::string text = e && e->contains("message") && e->at("message").is_string()
                             ? std::string(e->at("message").get_string())
                             : json::toText(*error);
      throw InvalidArgumentError("MCP server '" + server_ + "' answered " + std::string(method) +
                                 " with error " + code + ": " + clip(text, 2000));
    }
    const auto* result = pending.response.if_contains("result");
    return result ? *result : json::value(nullptr);
  }
  if (broken_) throwBroken();
  std::string hint = stderrHint();
  lock.unlock();
  try {
    notify("notifications/cancelled",
           json::object{{"requestId", id}, {"reason", "timed out in the Loom client"}}, 1000);
  } catch (const Error& e) {
    breakWith(e.code(), std::string("could not cancel a timed-out request: ") + e.what());
  }
  throw DeadlineExceededError("MCP server '" + server_ + "' did not answer " + std::string(method) +
                              " within " + std::to_string(timeoutMillis) + " ms (timeoutMillis)" +
                              hint);
}

void McpConnection::notify(std::string_view method, json::value params, int64_t timeoutMillis) {
  json::object message{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  write(json::toText(message) + "\n", timeoutMillis);
}

void McpConnection::readLoop() {
  std::string buffer;
  bool outOpen = true, errOpen = true;
  for (;;) {
    pollfd fds[3] = {{outOpen ? process_.stdoutFd() : -1, POLLIN, 0},
                     {errOpen ? process_.stderrFd() : -1, POLLIN, 0},
                     {wake_.read.get(), POLLIN, 0}};
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      breakWith(ErrorCode::kUnavailable,
                "MCP client '" + server_ + "': poll failed: " + std::string(strerror(errno)));
      return;
    }
    if (fds[2].revents != 0) return;  // stop() asked
    if (fds[1].revents != 0) readStderr(errOpen);
    if (fds[0].revents != 0) readStdout(buffer, outOpen);
  }
}

void McpConnection::readStderr(bool& open) {
  char chunk[8192];
  ssize_t r = ::read(process_.stderrFd(), chunk, sizeof chunk);
  if (r < 0 && errno == EINTR) return;
  if (r <= 0) {
    open = false;
    return;
  }
  std::lock_guard lock(mu_);
  stderr_.append(chunk, static_cast<std::size_t>(r));
  if (stderr_.size() > kMaxStderrBytes) stderr_.erase(0, stderr_.size() - kMaxStderrBytes);
}

void McpConnection::readStdout(std::string& buffer, bool& open) {
  char chunk[65536];
  ssize_t r = ::read(process_.stdoutFd(), chunk, sizeof chunk);
  if (r < 0 && errno == EINTR) return;
  if (r <= 0) {
    open = false;
    onStdoutClosed();
    return;
  }
  std::size_t scanFrom = buffer.size();
  buffer.append(chunk, static_cast<std::size_t>(r));
  std::size_t start = 0;
  for (auto nl = buffer.find('\n', scanFrom); nl != std::string::npos;
       nl = buffer.find('\n', start)) {
    dispatch(std::string_view(buffer).substr(start, nl - start));
    start = nl + 1;
  }
  buffer.erase(0, start);
  if (buffer.size() > kMaxLineBytes) {
    breakWith(ErrorCode::kDataLoss, "MCP server '" + server_ + "' wrote a line longer than " +
                                        std::to_string(kMaxLineBytes >> 20) +
                                        " MiB; it was stopped");
    process_.signalGroup(SIGKILL);
    buffer.clear();
  }
}

void McpConnection::onStdoutClosed() {
  auto ended = process_.exitDescription(500);
  // Whatever it wrote to stderr before exiting explains why; take it before reporting.
  for (bool open = true; open;) {
    pollfd p{process_.stderrFd(), POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) break;
    readStderr(open);
  }
  std::string hint;
  {
    std::lock_guard lock(mu_);
    hint = stderrHint();
  }
  std::string what = serving_ ? "; the call failed, and the next call starts the server again"
                              : " while Loom was starting it (initialize, tools/list), so "
                                "nothing ran; check its command, arguments and environment";
  breakWith(ErrorCode::kUnavailable,
            "MCP server '" + server_ + "' " + (ended ? *ended : "closed its stdout") + what + hint);
}

void McpConnection::dispatch(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  if (broken()) return;  // after garbage nothing on this stream can be trusted
  boost::system::error_code ec;
  json::value v = boost::json::parse(line, ec);
  bool ok = !ec && (v.is_object() || v.is_array());
  if (ok && v.is_array()) {  // a JSON-RPC batch (protocol 2025-03-26)
    for (const auto& m : v.get_array()) ok = ok && m.is_object();
  }
  if (!ok) {
    breakWith(ErrorCode::kDataLoss,
              "MCP server '" + server_ + "' wrote a line that is not a JSON-RPC message" +
                  (ec ? " (" + ec.message() + ")" : std::string()) + ": " + clip(line, 200) +
                  "; it was stopped (an MCP server over stdio must write only JSON-RPC to "
                  "stdout; logs belong on stderr)");
    process_.signalGroup(SIGKILL);
    return;
  }
  if (v.is_array()) {
    for (const auto& m : v.get_array()) handle(m);
  } else {
    handle(v);
  }
}

void McpConnection::handle(const json::value& message) {
  const auto& m = message.get_object();
  const auto* method = m.if_contains("method");
  const auto* id = m.if_contains("id");
  if (method && method->is_string()) {
    if (id && !id->is_null()) answerServerRequest(*id, method->get_string());
    return;  // notifications (logging, list_changed, progress) are not used by Loom
  }
  if (id == nullptr || !id->is_int64()) return;  // not an answer to anything we sent
  std::lock_guard lock(mu_);
  auto it = pending_.find(id->get_int64());
  if (it == pending_.end()) return;  // a late answer to a request that timed out
  it->second->response = m;
  it->second->done = true;
  cv_.notify_all();
}

void McpConnection::answerServerRequest(const json::value& id, std::string_view method) {
  json::object reply{{"jsonrpc", "2.0"}, {"id", id}};
  if (method == "ping") {
    reply["result"] = json::object{};
  } else {
    reply["error"] =
        json::object{{"code", kMethodNotFound},
                     {"message", "the Loom MCP client does not support " + std::string(method)}};
  }
  try {
    write(json::toText(reply) + "\n", 1000);
  } catch (const Error& e) {
    breakWith(e.code(), "MCP server '" + server_ + "': could not answer its " +
                            std::string(method) + " request: " + e.what());
  }
}

}  // namespace loom::providers
