// The PostgreSQL server of the tests: the private cluster scripts/test.sh starts
// (scripts/postgres-test-cluster.sh: initdb in a temporary folder, 127.0.0.1, a free port,
// fsync on) and names in LOOM_TEST_POSTGRES_URL; stopped by the script when the tests end.
#pragma once

#include <filesystem>
#include <string>

namespace loom::testing {

// LOOM_TEST_POSTGRES_URL, or "" when it is not set.
std::string testPostgresUrl();

// Why PostgreSQL tests cannot run here ("" when they can). When the test command asked for
// them (LOOM_TEST_POSTGRES_REQUIRED=1), a missing server also fails the calling test.
std::string postgresUnavailable();

// Skips the calling test when postgresUnavailable() says why (in a test body or a fixture's
// SetUp; it returns from the function).
#define LOOM_SKIP_WITHOUT_POSTGRES()                                                      \
  do {                                                                                    \
    if (std::string loomWhy = ::loom::testing::postgresUnavailable(); !loomWhy.empty()) { \
      GTEST_SKIP() << loomWhy;                                                            \
    }                                                                                     \
  } while (false)

// A schema name of its own for each scratch folder (the same folder gives the same schema, so
// a store reopened over it sees what it wrote).
std::string testSchemaFor(const std::filesystem::path& scratchDir);

// A cluster of the calling test's own (scripts/postgres-test-cluster.sh start), for a test that
// restarts or stops its server and so must not share one. Stopped and removed when destroyed.
// A test first checks postgresUnavailable(): a machine without PostgreSQL skips (or fails, when
// the test command required it).
class PrivatePostgres {
 public:
  PrivatePostgres();  // throws std::runtime_error with the script's message when it fails
  ~PrivatePostgres();
  PrivatePostgres(const PrivatePostgres&) = delete;
  PrivatePostgres& operator=(const PrivatePostgres&) = delete;

  const std::string& url() const { return url_; }
  // Restarts the server as a crash would (`pg_ctl restart -m immediate`), on the same port.
  void restartImmediately();

 private:
  std::string url_;
  std::string dir_;
};

}  // namespace loom::testing
