// docs/spec/http-api.md lists exactly the error codes the server answers with, at the statuses
// it uses: its table is generated from the server's (LOOM_UPDATE_DOCS=1 rewrites it).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "inspect/http_errors.h"
#include "inspect/inspector_route_table.h"
#include "loom/util/error.h"

namespace loom::testing {
namespace {

TEST(HttpApiSpec, ListsEveryErrorCodeTheServerAnswersWith) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::kStepFailed); ++c) {
    std::string_view name = errorCodeName(static_cast<ErrorCode>(c));
    bool listed = false;
    for (const inspect::HttpError& e : inspect::httpErrors()) listed = listed || e.code == name;
    EXPECT_TRUE(listed) << name << " has no row in the server's error table";
  }
  std::string path = std::string(LOOM_SOURCE_DIR) + "/docs/spec/http-api.md";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string spec = text.str();
  std::size_t start = spec.find("| code | status | when |");
  ASSERT_NE(start, std::string::npos) << path << " has no error table";
  std::size_t end = spec.find("\n\n", start);
  std::string table = spec.substr(start, end - start + 1);
  if (const char* update = std::getenv("LOOM_UPDATE_DOCS"); update && *update == '1') {
    spec.replace(start, table.size(), inspect::httpErrorsMarkdown());
    std::ofstream(path, std::ios::binary) << spec;
    table = inspect::httpErrorsMarkdown();
  }
  EXPECT_EQ(table, inspect::httpErrorsMarkdown())
      << path << " differs from the server's table (src/inspect/http_errors.cc); regenerate it "
      << "with LOOM_UPDATE_DOCS=1 build/release/tests/cli/loom_cli_test "
         "--gtest_filter='HttpApiSpec.*'";
}

// The list of routes is the server's route table, and every route has its section (a heading
// `### \`GET <path>...\`` for a read, a row of the operations' table for a POST).
TEST(HttpApiSpec, ListsEveryRouteTheServerAnswers) {
  std::string path = std::string(LOOM_SOURCE_DIR) + "/docs/spec/http-api.md";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string spec = text.str();
  std::size_t start = spec.find("| method | route | what |");
  ASSERT_NE(start, std::string::npos) << path << " has no route list";
  std::size_t end = spec.find("\n\n", start);
  std::string table = spec.substr(start, end - start + 1);
  if (const char* update = std::getenv("LOOM_UPDATE_DOCS"); update && *update == '1') {
    spec.replace(start, table.size(), inspect::routesMarkdown());
    std::ofstream(path, std::ios::binary) << spec;
    table = inspect::routesMarkdown();
  }
  EXPECT_EQ(table, inspect::routesMarkdown())
      << path << " differs from the server's route table (src/inspect/inspector_route_table.cc); "
      << "regenerate it with LOOM_UPDATE_DOCS=1 build/release/tests/cli/loom_cli_test "
         "--gtest_filter='HttpApiSpec.*'";
  for (const inspect::RouteRow& r : inspect::inspectorRoutes()) {
    if (r.path == "/") continue;  // the page, described at the top
    std::string section = r.method == "GET" ? "### `GET " + std::string(r.path)
                                            : "| `" + std::string(r.path) + "` |";
    EXPECT_NE(spec.find(section), std::string::npos) << path << " does not describe " << r.path;
  }
}

}  // namespace
}  // namespace loom::testing
