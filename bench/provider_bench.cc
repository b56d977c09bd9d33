// Provider overhead beyond the peer's own time, on loopback (<= 1 ms per model call
// and per MCP tool call). Model: OpenAiModel against a local cpp-httplib chat-completions server
// whose handler time is measured and subtracted, next to a raw httplib POST of the same body.
// MCP: McpTool::call (tools/call "echo", result mapping, taint) against the reference
// "everything" server, next to a raw JSON-RPC round trip on the same server's pipes.
// Run: ./build/release/bench/loom_provider_bench (MCP rows need scripts/install-mcp-servers.sh;
// figures in docs/benchmarks.md).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <httplib.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "loom/effects/taint.h"
#include "loom/providers/mcp_client.h"
#include "loom/providers/openai_model.h"

extern char** environ;

namespace {

using namespace loom;
using Clock = std::chrono::steady_clock;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// A chat-completions server that answers every POST with one canned completion and adds up the
// time its handler spent (the peer's own time).
class CannedChatServer {
 public:
  CannedChatServer() {
    json::object message{
        {"role", "assistant"},
        {"content", nullptr},
        {"tool_calls",
         json::array{json::object{
             {"id", "call_1"},
             {"type", "function"},
             {"function", {{"name", "fetch_report"}, {"arguments", R"({"page":3})"}}}}}}};
    body_ = json::toText(json::object{
        {"id", "c"},
        {"object", "chat.completion"},
        {"choices", json::array{json::object{
                        {"index", 0}, {"message", message}, {"finish_reason", "tool_calls"}}}},
        {"usage", {{"prompt_tokens", 900}, {"completion_tokens", 20}}}});
    server_.set_tcp_nodelay(true);
    server_.Post("/v1/chat/completions", [this](const httplib::Request&, httplib::Response& res) {
      auto start = Clock::now();
      res.set_content(body_, "application/json");
      handlerNanos_ +=
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~CannedChatServer() {
    server_.stop();
    thread_.join();
  }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int64_t takeHandlerNanos() { return handlerNanos_.exchange(0); }

 private:
  httplib::Server server_;
  std::string body_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int64_t> handlerNanos_{0};
};

// A transcript of a few turns with ~2 kB tool results, and three tools.
agent::ModelRequest modelRequest() {
  json::array messages{json::object{{"role", "system"}, {"content", "You are a researcher."}},
                       json::object{{"role", "user"}, {"content", "Summarize the reports."}}};
  for (int turn = 1; turn <= 4; ++turn) {
    std::string id = "call_" + std::to_string(turn);
    messages.push_back(json::object{
        {"role", "assistant"},
        {"toolCalls",
         json::array{json::object{
             {"id", id}, {"name", "fetch_report"}, {"arguments", {{"page", turn}}}}}}});
    messages.push_back(
        json::object{{"role", "tool"},
                     {"toolCallId", id},
                     {"content", {{"page", turn}, {"body", std::string(2000, 'r')}}}});
  }
  json::array tools;
  for (const char* name : {"fetch_report", "search", "summarize"}) {
    tools.push_back(json::object{
        {"name", name},
        {"description", "A tool"},
        {"inputSchema", {{"type", "object"}, {"properties", {{"page", {{"type", "integer"}}}}}}}});
  }
  return agent::ModelRequest::of(
      {}, json::value{{"messages", messages}, {"tools", tools}, {"purpose", "turn"}});
}

void BM_OpenAiModelCall(benchmark::State& state) {
  CannedChatServer server;
  ::setenv("LOOM_BENCH_KEY", "sk-bench", 1);
  providers::OpenAiModelOptions o;
  o.baseUrl = server.origin() + "/v1";
  o.model = "bench";
  o.apiKeyEnv = "LOOM_BENCH_KEY";
  providers::OpenAiModel model(o);
  agent::ModelRequest request = modelRequest();
  effects::EffectContext ctx;
  model.complete(ctx, request);  // warm: connect once
  server.takeHandlerNanos();
  Clock::duration total{};
  for (auto _ : state) {
    auto start = Clock::now();
    benchmark::DoNotOptimize(model.complete(ctx, request));
    total += Clock::now() - start;
  }
  double n = static_cast<double>(state.iterations());
  double handlerUs = static_cast<double>(server.takeHandlerNanos()) / 1000.0 / n;
  state.counters["call_us"] = micros(total) / n;
  state.counters["server_us"] = handlerUs;
  state.counters["overhead_us"] = micros(total) / n - handlerUs;
}
BENCHMARK(BM_OpenAiModelCall)->Unit(benchmark::kMicrosecond);

// The same body POSTed by a bare keep-alive httplib client: loopback HTTP without Loom.
void BM_RawHttpPost(benchmark::State& state) {
  CannedChatServer server;
  httplib::Client client(server.origin());
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  std::string body =
      json::toText(providers::toChatCompletionsBody(modelRequest(), {"bench", json::object{}}));
  client.Post("/v1/chat/completions", body, "application/json");
  server.takeHandlerNanos();
  Clock::duration total{};
  for (auto _ : state) {
    auto start = Clock::now();
    auto res = client.Post("/v1/chat/completions", body, "application/json");
    benchmark::DoNotOptimize(res->body.size());
    total += Clock::now() - start;
  }
  double n = static_cast<double>(state.iterations());
  double handlerUs = static_cast<double>(server.takeHandlerNanos()) / 1000.0 / n;
  state.counters["call_us"] = micros(total) / n;
  state.counters["overhead_us"] = micros(total) / n - handlerUs;
}
BENCHMARK(BM_RawHttpPost)->Unit(benchmark::kMicrosecond);

std::string serversDir() {
  const char* dir = std::getenv("LOOM_MCP_SERVERS_DIR");
  return dir && *dir ? dir : std::string(LOOM_SOURCE_DIR) + "/build/mcp-servers";
}

std::string everythingEntry() {
  return serversDir() + "/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
}

void BM_McpToolCall(benchmark::State& state) {
  if (!std::filesystem::exists(everythingEntry())) {
    state.SkipWithError("MCP servers not installed: run scripts/install-mcp-servers.sh");
    return;
  }
  providers::McpServerOptions o{"everything", "node", {everythingEntry(), "stdio"}};
  auto client = std::make_shared<providers::McpClient>(o);
  client->start();
  agent::ToolDefinition echo;
  for (const auto& t : client->toolDefinitions()) {
    if (t.name == "echo") echo = t;
  }
  providers::McpTool tool(client, echo);
  json::value args{{"message", std::string(200, 'x')}};
  effects::EffectContext ctx;
  for (int i = 0; i < 50; ++i) tool.call(ctx, args);  // warm the server's JIT
  for (auto _ : state) benchmark::DoNotOptimize(tool.call(ctx, args));
  client->close();
}
BENCHMARK(BM_McpToolCall)->Unit(benchmark::kMicrosecond);

// The baseline: the same tools/call written to and read from the same server's pipes by hand.
void BM_McpRawRoundTrip(benchmark::State& state) {
  if (!std::filesystem::exists(everythingEntry())) {
    state.SkipWithError("MCP servers not installed: run scripts/install-mcp-servers.sh");
    return;
  }
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) {
    state.SkipWithError("pipe failed");
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, in[1]);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string entry = everythingEntry();
  char* argv[] = {const_cast<char*>("node"), entry.data(), const_cast<char*>("stdio"), nullptr};
  pid_t pid = 0;
  posix_spawnp(&pid, "node", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  std::string buffer;
  auto send = [&](const std::string& line) {
    std::string text = line + "\n";
    for (std::size_t done = 0; done < text.size();) {
      ssize_t w = write(in[1], text.data() + done, text.size() - done);
      if (w <= 0) return;
      done += static_cast<std::size_t>(w);
    }
  };
  auto receive = [&](int64_t id) {  // the line answering `id`
    std::string want = "\"id\":" + std::to_string(id) + "}";
    for (;;) {
      for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n')) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        if (line.find(want) != std::string::npos) return line;
      }
      char chunk[65536];
      ssize_t r = read(out[0], chunk, sizeof chunk);
      if (r <= 0) return std::string();
      buffer.append(chunk, static_cast<std::size_t>(r));
    }
  };
  send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
       R"("2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}})");
  receive(1);
  send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  int64_t id = 2;
  std::string message(200, 'x');
  auto call = [&] {
    send(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":"echo","arguments":{"message":")" + message +
         "\"}}}");
    return receive(id++);
  };
  for (int i = 0; i < 50; ++i) call();
  for (auto _ : state) benchmark::DoNotOptimize(call());
  close(in[1]);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
}
BENCHMARK(BM_McpRawRoundTrip)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
