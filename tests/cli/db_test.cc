// `loom db migrate` on the real binary against the test cluster (support/postgres_server.h):
// it creates the schema's tables (twice is fine), says where without the password, takes the
// url from LOOM_DATABASE_URL too, and refuses a missing url, an unreachable server and a bad
// schema name with a message saying what to do.
#include <gtest/gtest.h>

#include "support/loom_process.h"
#include "support/postgres_server.h"

namespace loom::testing {
namespace {

// The password of a postgresql://user:password@host/... url.
std::string passwordOf(const std::string& url) {
  auto start = url.find("://") + 3;
  auto colon = url.find(':', start);
  auto at = url.find('@', start);
  return colon < at ? url.substr(colon + 1, at - colon - 1) : "";
}

TEST(DbMigrate, CreatesTheTablesTwiceAndNeverPrintsThePassword) {
  LOOM_SKIP_WITHOUT_POSTGRES();
  TempDir dir;
  std::string url = testPostgresUrl();
  auto first = runLoom({"db", "migrate", "--url", url, "--schema", "cli_migrate"}, dir);
  ASSERT_EQ(0, first.exitCode) << first.err;
  EXPECT_NE(first.out.find("migrated schema 'cli_migrate'"), std::string::npos) << first.out;
  auto second = runLoom({"db", "migrate", "--schema", "cli_migrate", "--json"}, dir,
                        {"LOOM_DATABASE_URL=" + url});
  ASSERT_EQ(0, second.exitCode) << second.err;
  json::value v = second.json();
  EXPECT_EQ(v.at("schema").as_string(), "cli_migrate");
  EXPECT_EQ(v.at("schemaVersion").as_int64(), 6);  // 6: the usage columns
  std::string password = passwordOf(url);
  ASSERT_FALSE(password.empty()) << "the test cluster's url has a password";
  for (const auto& o : {first, second}) {
    EXPECT_EQ(o.out.find(password), std::string::npos) << o.out;
    EXPECT_EQ(o.err.find(password), std::string::npos) << o.err;
  }
}

TEST(DbMigrate, AMissingUrlAnUnreachableServerAndABadSchemaAreRefused) {
  TempDir dir;
  auto none = runLoom({"db", "migrate"}, dir, {"LOOM_DATABASE_URL="});
  EXPECT_EQ(2, none.exitCode);
  EXPECT_NE(none.err.find("LOOM_DATABASE_URL"), std::string::npos) << none.err;
  auto gone =
      runLoom({"db", "migrate", "--url", "postgresql://loom:s3cret@127.0.0.1:1/postgres"}, dir);
  EXPECT_EQ(1, gone.exitCode);
  EXPECT_NE(gone.err.find("cannot connect to postgresql"), std::string::npos) << gone.err;
  EXPECT_EQ(gone.err.find("s3cret"), std::string::npos) << gone.err;
  auto bad =
      runLoom({"db", "migrate", "--url", "postgresql://127.0.0.1:1/x", "--schema", "Bad"}, dir);
  EXPECT_EQ(1, bad.exitCode);
  EXPECT_NE(bad.err.find("not a plain identifier"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace loom::testing
