// `loom sim` as docs/testing.md runs it: the real binary, seeds one after another, a JSON line
// per seed and a summary, the same report for a seed run twice, and a bad flag refused
// (exit 2) naming it; and on PostgreSQL, each seed in a schema of its own, dropped after.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "support/loom_process.h"
#include "support/postgres_server.h"

namespace loom::testing {
namespace {

std::vector<json::value> jsonLines(const std::string& text) {
  std::vector<json::value> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(json::parse(line, "loom sim --json"));
  }
  return lines;
}

TEST(SimCli, RunsSeedsAndSummarisesThemAndASeedReportsTheSameTwice) {
  TempDir dir;
  std::string scratch = dir / "scratch";
  Outcome run =
      runLoom({"sim", "--from", "20", "--seeds", "3", "--json", "--scratch", scratch}, dir);
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  std::vector<json::value> lines = jsonLines(run.out);
  ASSERT_EQ(lines.size(), 4u) << run.out;
  EXPECT_EQ(lines[0].at("seed").to_number<int64_t>(), 20);
  EXPECT_EQ(lines[2].at("seed").to_number<int64_t>(), 22);
  EXPECT_EQ(lines[1].at("replay"), "loom sim --from 21 --seeds 1 --trace");
  EXPECT_EQ(lines[3].at("seeds").to_number<int64_t>(), 3);
  EXPECT_TRUE(lines[3].at("failed").as_array().empty()) << run.out;
  EXPECT_GT(lines[3].at("counts").at("runs").as_int64(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(scratch)) << "every seed's home is removed";

  Outcome again =
      runLoom({"sim", "--from", "21", "--seeds", "1", "--json", "--scratch", scratch}, dir);
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(jsonLines(again.out).at(0), lines[1]) << "the same seed, the same report";
}

TEST(SimCli, OnPostgresEachSeedRunsInASchemaOfItsOwnDroppedAfter) {
  LOOM_SKIP_WITHOUT_POSTGRES();
  TempDir dir;
  Outcome run = runLoom({"sim", "--from", "254", "--seeds", "2", "--json", "--scratch",
                         dir / "scratch", "--postgres", testPostgresUrl()},
                        dir);
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  std::vector<json::value> lines = jsonLines(run.out);
  ASSERT_EQ(lines.size(), 3u) << run.out;
  EXPECT_EQ(lines[0].at("replay"),
            "loom sim --from 254 --seeds 1 --trace --postgres <the same url>");
  EXPECT_GT(lines[2].at("counts").at("crashes").as_int64(), 0) << run.out;
  EXPECT_GT(lines[2].at("counts").at("erasures").as_int64(), 0) << run.out;
  // psql (Debian's postgresql-client, beside the server) counts the schemas left.
  std::string count = "psql '" + testPostgresUrl() +
                      "' -Atc \"SELECT count(*) FROM pg_namespace WHERE nspname LIKE "
                      "'loom\\\\_sim\\\\_%'\" 2>&1";
  std::string out;
  FILE* psql = ::popen(count.c_str(), "r");
  ASSERT_NE(psql, nullptr);
  for (char buf[256]; std::fgets(buf, sizeof buf, psql) != nullptr;) out += buf;
  ASSERT_EQ(::pclose(psql), 0) << out;
  EXPECT_EQ(out, "0\n") << "every seed's schema is dropped";
}

TEST(SimCli, ABadBudgetOrNoSeedsIsAUsageErrorNamingTheFlag) {
  TempDir dir;
  Outcome budget = runLoom({"sim", "--budget", "forever"}, dir);
  EXPECT_EQ(budget.exitCode, 2);
  EXPECT_NE(budget.err.find("--budget: 'forever' is not a duration"), std::string::npos)
      << budget.err;
  Outcome none = runLoom({"sim", "--seeds", "0"}, dir);
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("--seeds"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace loom::testing
