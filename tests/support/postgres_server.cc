#include "support/postgres_server.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>

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

}  // namespace loom::testing
