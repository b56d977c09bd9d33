// The fixture of the `loom serve` tests: a home in a temporary folder, the real binary serving
// it on a free loopback port, and a client.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include "support/loom_process.h"
#include "support/loopback.h"

namespace loom::testing {

inline const std::string kTools = std::string(LOOM_SOURCE_DIR) + "/examples/agents/tools/";

// An agent app: turn 1 calls `search` (untrusted: its result is tainted) and `fetch_report`
// (claim-checked: its 1.5-4 kB result is offloaded), turn 2 calls `publish` (needs approval),
// turn 3 answers.
inline void writeAgentApp(const TempDir& dir) {
  std::ofstream(dir / "script.json") << R"({"turns": [
    {"toolCalls": [{"name": "search", "arguments": {"query": "revenue"}},
                   {"name": "fetch_report", "arguments": {"page": 2}}]},
    {"toolCalls": [{"name": "publish", "arguments": {"pages": 1}}]},
    {"answer": "Published."}]})";
  std::ofstream(dir / "agent.toml") << R"([agent]
name = "inspect"
prompt = "Read page 2, then publish."
[model]
kind = "scripted"
script = "script.json"
[[tools]]
name = "search"
description = "Searches the reports."
command = [")" + kTools + R"(search"]
untrusted = true
[[tools]]
name = "fetch_report"
description = "Fetches one page."
command = [")" + kTools + R"(fetch_report"]
[[tools]]
name = "publish"
description = "Publishes."
command = [")" + kTools + R"(publish"]
requiresApproval = true
[storage.contentStore]
kind = "filesystem"
[execution.claimCheck]
store = "default"
toolIds = ["fetch_report"]
inlineCapBytes = 256
)";
}

class ServeCli : public ::testing::Test {
 protected:
  std::string home() const { return dir_ / "home"; }

  Outcome loom(std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home()});
    return runLoom(args, dir_, env_);
  }

  // Starts `loom serve` on a free port and waits until it answers.
  void serve(std::vector<std::string> extra = {}, std::vector<std::string> env = {}) {
    port_ = freeLoopbackPort();
    std::vector<std::string> args{"--home", home(), "serve", "--port", std::to_string(port_)};
    args.insert(args.end(), extra.begin(), extra.end());
    env.insert(env.end(), env_.begin(), env_.end());
    server_ = std::make_unique<Child>(args, dir_, env);
    for (int i = 0; i < 400; ++i) {
      httplib::Client probe("127.0.0.1", port_);
      if (auto r = probe.Get("/"); r) return;
      ASSERT_FALSE(server_->exited()) << "loom serve ended before it answered";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "loom serve did not answer on port " << port_;
  }

  httplib::Client client() {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }

  // GET `path`: the status and the body parsed as JSON.
  std::pair<int, json::value> get(const std::string& path, httplib::Headers headers = {}) {
    auto r = client().Get(path, headers);
    if (!r) return {-1, nullptr};
    return {r->status, json::parse(r->body, path)};
  }

  std::pair<int, json::value> post(const std::string& path, const std::string& body,
                                   httplib::Headers headers = {{"X-Loom-Request", "1"}}) {
    auto r = client().Post(path, headers, body, "application/json");
    if (!r) return {-1, nullptr};
    return {r->status, json::parse(r->body, path)};
  }

  static std::string code(const json::value& v) {
    return std::string(v.at("error").at("code").as_string());
  }

  std::vector<std::string> env_;  // LOOM_DATABASE_URL and _SCHEMA on PostgreSQL
  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<Child> server_;
};

}  // namespace loom::testing
