// docs/spec/http-api.md lists exactly the error codes the server answers with, at the statuses
// it uses: its table is generated from the server's (LOOM_UPDATE_DOCS=1 rewrites it).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli/serve_errors.h"
#include "loom/util/error.h"

namespace loom::testing {
namespace {

TEST(HttpApiSpec, ListsEveryErrorCodeTheServerAnswersWith) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::kStepFailed); ++c) {
    std::string_view name = errorCodeName(static_cast<ErrorCode>(c));
    bool listed = false;
    for (const cli::HttpError& e : cli::httpErrors()) listed = listed || e.code == name;
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
    spec.replace(start, table.size(), cli::httpErrorsMarkdown());
    std::ofstream(path, std::ios::binary) << spec;
    table = cli::httpErrorsMarkdown();
  }
  EXPECT_EQ(table, cli::httpErrorsMarkdown())
      << path << " differs from the server's table (src/cli/serve_errors.cc); regenerate it "
      << "with LOOM_UPDATE_DOCS=1 build/release/tests/cli/loom_cli_test "
         "--gtest_filter='HttpApiSpec.*'";
}

}  // namespace
}  // namespace loom::testing
