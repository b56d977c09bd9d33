// `loom config check FILE` through the real binary: a good file prints the validated config
// (exit 0), a bad one every problem at once with its option path (exit 1); nothing is
// created either way.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/loom_process.h"

namespace loom::testing {
namespace {

std::string writeFile(const TempDir& dir, const std::string& name, const std::string& text) {
  std::string path = dir / name;
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigCheckTest, AGoodFileIsPrintedValidated) {
  TempDir dir;
  std::string file = writeFile(dir, "loom.toml", R"(
[storage]
home = "data"
[storage.eventStore]
durability = "normal"
[[execution.effectMiddleware]]
kind = "retry"
attempts = 4
)");
  Outcome o = runLoom({"config", "check", file}, dir);
  ASSERT_EQ(o.exitCode, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_EQ(o.out.rfind(file + ": valid\n", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("storage.eventStore.durability = \"normal\""), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("chain, outermost first: killSwitch -> retry -> effect"), std::string::npos)
      << o.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "data")) << "a check opens and creates nothing";
}

TEST(ConfigCheckTest, ABadFileListsEveryProblemWithItsPath) {
  TempDir dir;
  std::string file = writeFile(dir, "loom.toml", R"(
effectMiddleware = []
[storage]
colour = "blue"
[storage.eventStore]
durability = "fast"
)");
  Outcome o = runLoom({"config", "check", file}, dir);
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_NE(o.out.find("3 problems"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("effectMiddleware: a grouped option cannot be written at the top level; "
                       "write it as execution.effectMiddleware"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("storage.colour: unknown option"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("storage.eventStore.durability: expected one of \"full\", \"normal\"; "
                       "got \"fast\""),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.err.rfind("loom: " + file + " is not a valid configuration", 0), 0u) << o.err;
}

TEST(ConfigCheckTest, MissingFileAndMissingSubcommand) {
  TempDir dir;
  Outcome missing = runLoom({"config", "check", dir / "nope.toml"}, dir);
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.out.find("no such file"), std::string::npos) << missing.out;
  Outcome bare = runLoom({"config"}, dir);
  EXPECT_EQ(bare.exitCode, 2);
  EXPECT_NE(bare.err.find("loom config --help"), std::string::npos) << bare.err;
}

}  // namespace
}  // namespace loom::testing
