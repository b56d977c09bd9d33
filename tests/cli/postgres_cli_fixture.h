// The fixture of the `loom` tests on PostgreSQL (postgres_cli_test.cc, postgres_homes_test.cc):
// each "machine" is a home folder of its own over one shared schema of the test cluster, and no
// output or file may hold the password.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "support/loom_process.h"
#include "support/postgres_server.h"

namespace loom::testing {

inline const std::string kExamples = std::string(LOOM_SOURCE_DIR) + "/examples/agents/";

// The password of a postgresql://user:password@host/... url.
inline std::string passwordOf(const std::string& url) {
  auto start = url.find("://") + 3;
  auto colon = url.find(':', start);
  auto at = url.find('@', start);
  return colon < at ? url.substr(colon + 1, at - colon - 1) : "";
}

class PostgresCli : public ::testing::Test {
 protected:
  void SetUp() override {
    LOOM_SKIP_WITHOUT_POSTGRES();
    url_ = testPostgresUrl();
    schema_ = testSchemaFor(dir_.path());
    env_ = {"LOOM_DATABASE_URL=" + url_, "LOOM_DATABASE_SCHEMA=" + schema_};
    Outcome migrated = cli({"db", "migrate"});
    ASSERT_EQ(0, migrated.exitCode) << migrated.err;
  }

  // `loom args...` on this schema, from the folder of machine `machine` (its own home).
  Outcome cli(std::vector<std::string> args, const std::string& machine = "a",
              std::vector<std::string> extraEnv = {}) {
    args.insert(args.begin(), {"--home", home(machine)});
    std::vector<std::string> env = env_;
    env.insert(env.end(), extraEnv.begin(), extraEnv.end());
    Outcome o = runLoom(args, dir_, env);
    outputs_.push_back(o.out + o.err);
    return o;
  }
  std::string home(const std::string& machine) const { return dir_ / ("machine-" + machine); }
  std::string stepsInput(int steps, int sleepMs) const {
    return "{\"steps\":" + std::to_string(steps) + ",\"sleepMs\":" + std::to_string(sleepMs) +
           ",\"witness\":\"" + witness() + "\"}";
  }
  std::string witness() const { return dir_ / "witness.txt"; }
  // The compliance example on machine a: run e1 for alice and e2 for bob, sealed.
  void runAliceAndBob() {
    for (auto [id, subject] : {std::pair{"e1", "alice"}, std::pair{"e2", "bob"}}) {
      Outcome run =
          cli({"run", kExamples + "compliance.toml", "--id", id, "--subject", subject, "--json"},
              "a", masterKey_);
      ASSERT_EQ(0, run.exitCode) << run.err;
      ASSERT_EQ(run.json().at("status"), "completed") << run.out;
    }
  }

  // An agent app ("hello from NAME") reading its master key `key` from a key file of its own;
  // `more` is appended to it. Returns the app and the key file.
  std::pair<std::string, std::string> keyedApp(const std::string& name, const std::string& key,
                                               const std::string& more = "") {
    std::string keyFile = dir_ / ("key-" + name);
    std::ofstream(keyFile) << key << "\n";
    std::filesystem::permissions(
        keyFile, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::string script = dir_ / "answer.json";
    std::ofstream(script) << R"({"turns": [{"answer": "done"}]})";
    std::string file = dir_ / ("app-" + name + ".toml");
    std::ofstream(file) << "[agent]\nname = \"keyed\"\nprompt = \"hello from " << name
                        << "\"\n\n[model]\nkind = \"scripted\"\nscript = \"" << script
                        << "\"\n\n[security.keys]\nfile = \"" << keyFile << "\"\n"
                        << more;
    return {file, keyFile};
  }

  void TearDown() override {
    if (url_.empty()) return;
    std::string password = passwordOf(url_);
    ASSERT_FALSE(password.empty()) << "the test cluster's url has a password";
    for (const auto& text : outputs_) EXPECT_EQ(text.find(password), std::string::npos) << text;
    EXPECT_FALSE(folderContains(dir_.path().string(), password)) << "the password reached a file";
  }

  TempDir dir_;
  std::string url_;
  std::string schema_;
  std::vector<std::string> env_;
  std::vector<std::string> outputs_;
  const std::vector<std::string> masterKey_ = {
      "LOOM_MASTER_KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"};
};

// The output of `command` run by the shell (stderr too) and its exit status.
inline std::pair<int, std::string> shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  for (char buf[512]; std::fgets(buf, sizeof buf, p) != nullptr;) out += buf;
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace loom::testing
