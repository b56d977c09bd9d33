// `loom config check FILE` through the real binary: a good file prints the validated config
// (exit 0), a bad one every problem at once with its option path (exit 1); nothing is
// created either way.
#include <gtest/gtest.h>

#include <fstream>

#include "support/loom_process.h"

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

  Outcome asJson = runLoom({"config", "check", file, "--json"}, dir);
  EXPECT_EQ(asJson.exitCode, 1);
  EXPECT_EQ(asJson.err, "") << "--json: only the JSON value";
  json::value doc = asJson.json();
  EXPECT_EQ(doc.at("valid"), false);
  EXPECT_EQ(doc.at("file"), json::value(file));
  ASSERT_EQ(doc.at("problems").as_array().size(), 3u) << asJson.out;
  EXPECT_NE(asJson.out.find(R"({"path":"storage.colour","message":"unknown option)"),
            std::string::npos)
      << asJson.out;
  Outcome good =
      runLoom({"config", "check", LOOM_SOURCE_DIR "/examples/agents/research.toml", "--json"}, dir);
  EXPECT_EQ(good.exitCode, 0) << good.err;
  EXPECT_EQ(good.json().at("valid"), true);
  EXPECT_TRUE(good.json().at("problems").as_array().empty());
}

// An agent app with the shipped fetch_report tool whose claim-check lists `toolIds`.
std::string claimCheckApp(const TempDir& dir, const std::string& toolIds) {
  writeFile(dir, "script.json", R"({"turns": [{"answer": "done"}]})");
  return writeFile(dir, "app.toml",
                   "[agent]\nname = \"a\"\nprompt = \"go\"\n[model]\nscript = \"script.json\"\n"
                   "[[tools]]\nname = \"fetch_report\"\ncommand = [\"" LOOM_SOURCE_DIR
                   "/examples/agents/tools/fetch_report\"]\n[execution.claimCheck]\ntoolIds = " +
                       toolIds + "\n");
}

TEST(ConfigCheckTest, AnAgentAppIsCheckedAsBootChecksIt) {
  TempDir dir;
  std::string home = dir / "home";
  struct Case {
    std::string toolIds;
    std::string problem;
  };
  for (const Case& c :
       {Case{R"(["fetch_report", "scripted"])",
             "execution.claimCheck.toolIds: 'scripted' is a model (an llm task)"},
        Case{R"(["fetch_reprot"])",
             "execution.claimCheck.toolIds: 'fetch_reprot' is no tool of this app, so nothing "
             "would be offloaded for it: the app's tools are fetch_report; check the spelling"}}) {
    SCOPED_TRACE(c.toolIds);
    std::string file = claimCheckApp(dir, c.toolIds);
    Outcome check = runLoom({"config", "check", file}, dir);
    EXPECT_EQ(check.exitCode, 1) << check.out;
    EXPECT_NE(check.out.find("1 problem;"), std::string::npos) << check.out;
    EXPECT_NE(check.out.find("\n  " + c.problem), std::string::npos) << check.out;
    Outcome run = runLoom({"--home", home, "run", file}, dir);
    EXPECT_EQ(run.exitCode, 1) << "boot refuses what the check refused: " << run.out;
    EXPECT_NE(run.err.find(c.problem), std::string::npos) << run.err;
  }
  Outcome good = runLoom({"config", "check", claimCheckApp(dir, R"(["fetch_report"])")}, dir);
  EXPECT_EQ(good.exitCode, 0) << good.out;
  EXPECT_FALSE(std::filesystem::exists(home)) << "nothing is created for a refused app";
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

namespace loom::testing {
namespace {

TEST(ConfigCheckTest, AnApprovalTimeoutIsADurationAndItsActionOneOfThree) {
  TempDir dir;
  std::string file = writeFile(dir, "app.toml", R"(
[agent]
name = "mailer"
prompt = "x"
[[tools]]
name = "send"
command = ["/bin/true"]
requiresApproval = true
approvalTimeout = "a day"
onApprovalTimeout = "maybe"
)");
  Outcome o = runLoom({"config", "check", file}, dir);
  EXPECT_EQ(o.exitCode, 1);
  EXPECT_NE(o.out.find("tools[0].approvalTimeout: 'a day' is not a duration"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("tools[0].onApprovalTimeout: 'maybe' is not one of"), std::string::npos)
      << o.out;
}

}  // namespace
}  // namespace loom::testing
