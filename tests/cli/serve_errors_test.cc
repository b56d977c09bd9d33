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

// docs/spec/http-api.md's table that starts with `header`, compared with `generated` (the
// server's own); LOOM_UPDATE_DOCS=1 rewrites it. Returns the spec's text.
std::string checkGeneratedTable(const std::string& header, const std::string& generated,
                                const std::string& source) {
  std::string path = std::string(LOOM_SOURCE_DIR) + "/docs/spec/http-api.md";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string spec = text.str();
  std::size_t start = spec.find(header);
  if (start == std::string::npos) {
    ADD_FAILURE() << path << " has no table starting " << header;
    return spec;
  }
  std::size_t end = spec.find("\n\n", start);
  std::string table = spec.substr(start, end - start + 1);
  if (const char* update = std::getenv("LOOM_UPDATE_DOCS"); update && *update == '1') {
    spec.replace(start, table.size(), generated);
    std::ofstream(path, std::ios::binary) << spec;
    table = generated;
  }
  EXPECT_EQ(table, generated) << path << " differs from the server's table (" << source
                              << "); regenerate it with LOOM_UPDATE_DOCS=1 "
                                 "build/release/tests/cli/loom_cli_test "
                                 "--gtest_filter='HttpApiSpec.*'";
  return spec;
}

TEST(HttpApiSpec, ListsEveryErrorCodeTheServerAnswersWith) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::kStepFailed); ++c) {
    std::string_view name = errorCodeName(static_cast<ErrorCode>(c));
    bool listed = false;
    for (const inspect::HttpError& e : inspect::httpErrors()) listed = listed || e.code == name;
    EXPECT_TRUE(listed) << name << " has no row in the server's error table";
  }
  checkGeneratedTable("| code | status | when |", inspect::httpErrorsMarkdown(),
                      "src/inspect/http_errors.cc");
}

// The list of routes is the server's route table, and every route has its section (a heading
// `### \`GET <path>...\`` for a read, a row of the operations' table for a POST).
TEST(HttpApiSpec, ListsEveryRouteTheServerAnswers) {
  std::string spec = checkGeneratedTable("| method | route | what |", inspect::routesMarkdown(),
                                         "src/inspect/inspector_route_table.cc");
  for (const inspect::RouteRow& r : inspect::inspectorRoutes()) {
    if (r.path == "/") continue;  // the page, described at the top
    std::string section = r.method == "GET" ? "### `GET " + std::string(r.path)
                                            : "| `" + std::string(r.path) + "` |";
    EXPECT_NE(spec.find(section), std::string::npos)
        << "docs/spec/http-api.md does not describe " << r.path;
  }
}

}  // namespace
}  // namespace loom::testing
