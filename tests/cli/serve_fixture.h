// The fixture of the `loom serve` tests: a home in a temporary folder, the real binary serving
// it on a free loopback port, and a client.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <thread>

#include "support/loom_process.h"
#include "support/loopback.h"

namespace loom::testing {

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
