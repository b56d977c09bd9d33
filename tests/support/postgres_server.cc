#include "support/postgres_server.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>

namespace loom::testing {

std::string testPostgresUrl() {
  const char* url = std::getenv("LOOM_TEST_POSTGRES_URL");
  return url != nullptr ? url : "";
}

std::string postgresUnavailable() {
  if (!testPostgresUrl().empty()) return "";
  std::string why =
      "no PostgreSQL server for the tests: LOOM_TEST_POSTGRES_URL is not set (scripts/test.sh "
      "starts a private cluster and sets it; or run `eval \"$(scripts/postgres-test-cluster.sh "
      "start)\"` first)";
  const char* required = std::getenv("LOOM_TEST_POSTGRES_REQUIRED");
  if (required != nullptr && std::string(required) == "1") ADD_FAILURE() << why;
  return why;
}

std::string testSchemaFor(const std::filesystem::path& scratchDir) {
  std::size_t h = std::hash<std::string>{}(scratchDir.string());
  char buf[32];
  std::snprintf(buf, sizeof buf, "t_%016zx", h);
  return buf;
}

namespace {

std::string clusterScript() {
  return std::string(LOOM_SOURCE_DIR) + "/scripts/postgres-test-cluster.sh";
}

// Runs `command`; returns its stdout, throwing when it exits non-zero.
std::string runScript(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  if (::pclose(pipe) != 0) throw std::runtime_error(command + " failed: " + out);
  return out;
}

std::string assignment(const std::string& text, const std::string& name) {
  auto at = text.find(name + "=");
  if (at == std::string::npos) throw std::runtime_error("no " + name + " in: " + text);
  at += name.size() + 1;
  return text.substr(at, text.find('\n', at) - at);
}

}  // namespace

PrivatePostgres::PrivatePostgres() {
  std::string out = runScript(clusterScript() + " start");
  url_ = assignment(out, "LOOM_TEST_POSTGRES_URL");
  dir_ = assignment(out, "LOOM_TEST_POSTGRES_DIR");
}

PrivatePostgres::~PrivatePostgres() {
  try {
    runScript(clusterScript() + " stop " + dir_);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
}

void PrivatePostgres::restartImmediately() { runScript(clusterScript() + " restart " + dir_); }

}  // namespace loom::testing
