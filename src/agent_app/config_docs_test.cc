// docs/config.md is generated from the option table; this keeps the file in step.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "app/options.h"
#include "loom/agent_app/agent_app.h"

namespace loom::app {
namespace {

// docs/config.md documents every section, the agent app's included.
class ConfigDocs : public ::testing::Test {
 protected:
  void SetUp() override { agent_app::registerAgentAppSections(); }
};

TEST_F(ConfigDocs, DocsConfigMdMatchesTheOptionTable) {
  std::string path = std::string(LOOM_SOURCE_DIR) + "/docs/config.md";
  std::string generated = configReferenceMarkdown();
  if (const char* update = std::getenv("LOOM_UPDATE_DOCS"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << generated;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), generated)
      << path << " differs from the option table; regenerate it with LOOM_UPDATE_DOCS=1 "
      << "build/release/src/agent_app/loom_agent_app_test --gtest_filter='ConfigDocs.*'";
}

TEST_F(ConfigDocs, EveryRowIsDocumentedWithItsDefault) {
  std::string md = configReferenceMarkdown();
  for (const OptionRow& row : optionTable()) {
    EXPECT_NE(md.find("`" + row.path + "`"), std::string::npos) << row.path;
    if (!row.defaultText.empty()) {
      EXPECT_NE(md.find("| `" + row.defaultText + "` |"), std::string::npos) << row.path;
    }
  }
}

}  // namespace
}  // namespace loom::app
