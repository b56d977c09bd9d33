// Hostile or mistaken input never makes a home unreadable or unaddressable: ids that could not be
// addressed or printed, values nested past the limit.
#include <gtest/gtest.h>

#include <fstream>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

class InputLimits : public ::testing::Test {
 protected:
  Outcome loom(std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home_});
    return runLoom(args, dir_);
  }
  TempDir dir_;
  std::string home_ = dir_ / "home";
};

TEST_F(InputLimits, AnExecutionIdThatCouldNotBeAddressedOrPrintedIsAUsageError) {
  for (std::string bad : {std::string(""), std::string("-x"), std::string("a\x1b[2Jb"),
                          std::string("line\nbreak"), std::string(200, 'i')}) {
    Outcome o = bad == "-x"
                    ? loom({"run", "example.steps", "--id=-x", "--input", R"({"steps": 1})"})
                    : loom({"run", "example.steps", "--id", bad, "--input", R"({"steps": 1})"});
    EXPECT_EQ(o.exitCode, 2) << bad;
    EXPECT_NE(o.err.find("--id: execution id is"), std::string::npos) << o.err;
  }
  Outcome ls = loom({"ls", "--json"});
  EXPECT_TRUE(ls.exitCode != 0 || ls.json().as_array().empty()) << "nothing was started";
  EXPECT_EQ(loom({"run", "example.steps", "--id", "order-42.a:b_c", "--input", R"({"steps": 1})"})
                .exitCode,
            0);
}

TEST_F(InputLimits, AJsonArgumentWithADuplicateKeyIsRefusedNamingTheKey) {
  Outcome run =
      loom({"run", "example.steps", "--id", "dup", "--input", R"({"steps": 1, "steps": 3})"});
  EXPECT_NE(run.exitCode, 0);
  EXPECT_NE(run.err.find("--input: the key \"steps\" appears twice"), std::string::npos) << run.err;
  EXPECT_NE(loom({"log", "dup"}).exitCode, 0) << "nothing was recorded";

  ASSERT_EQ(loom({"run", "example.approval", "--id", "wait"}).exitCode, 0);
  Outcome signal = loom({"signal", "wait", "approve", R"({"ok": true, "ok": false})"});
  EXPECT_NE(signal.exitCode, 0);
  EXPECT_NE(signal.err.find("the key \"ok\" appears twice"), std::string::npos) << signal.err;
  Outcome state = loom({"state", "wait", "--json"});
  ASSERT_EQ(state.exitCode, 0) << state.err;
  EXPECT_EQ(state.json().at("status").as_string(), "parked") << "the signal was not recorded";
}

// {"a": [{"a": [... 1 ...]}]}: `levels` nested arrays and objects.
std::string nested(int levels) {
  std::string open, close;
  for (int i = 0; i < levels; ++i) {
    open += i % 2 == 0 ? "{\"a\":" : "[";
    close = (i % 2 == 0 ? "}" : "]") + close;
  }
  return open + "1" + close;
}

TEST_F(InputLimits, AValueNestedPastTheLimitIsRefusedWhereItEntersAndTheHomeStaysReadable) {
  Outcome deep = loom({"run", "example.approval", "--id", "deep", "--input", nested(33)});
  EXPECT_NE(deep.exitCode, 0);
  EXPECT_NE(deep.err.find("nests more than 32 levels"), std::string::npos) << deep.err;
  EXPECT_NE(loom({"log", "deep"}).exitCode, 0) << "nothing was recorded";

  ASSERT_EQ(loom({"run", "example.approval", "--id", "edge", "--input", nested(32)}).exitCode, 0);
  Outcome tooDeep = loom({"signal", "edge", "approve", nested(33)});
  EXPECT_NE(tooDeep.exitCode, 0);
  EXPECT_NE(tooDeep.err.find("the payload of signal 'approve' nests"), std::string::npos)
      << tooDeep.err;
  Outcome signalled = loom({"signal", "edge", "approve", nested(32), "--json"});
  ASSERT_EQ(signalled.exitCode, 0) << signalled.err;
  EXPECT_EQ(signalled.json().at("status"), "completed");
  for (std::vector<std::string> read : {std::vector<std::string>{"log", "edge", "--json"},
                                        {"state", "edge"},
                                        {"ls"},
                                        {"sweep", "--dry-run"}}) {
    Outcome o = loom(read);
    EXPECT_EQ(o.exitCode, 0) << read[0] << ": " << o.err;
  }
}

}  // namespace
}  // namespace loom::testing

namespace loom::testing {
namespace {

TEST(Mistakes, AnUnknownSubcommandSuggestsTheClosestAndHelpTakesACommand) {
  TempDir dir;
  Outcome typo = runLoom({"lss"}, dir);
  EXPECT_EQ(typo.exitCode, 2);
  EXPECT_NE(typo.err.find("unknown subcommand 'lss'; did you mean `loom ls`?"), std::string::npos)
      << typo.err;
  Outcome help = runLoom({"help", "sweep"}, dir);
  EXPECT_EQ(help.exitCode, 0) << help.err;
  EXPECT_NE(help.out.find("loom sweep"), std::string::npos) << help.out;
  Outcome root = runLoom({"help"}, dir);
  EXPECT_EQ(root.exitCode, 0);
  EXPECT_NE(root.out.find("Subcommands"), std::string::npos) << root.out;
}

TEST(Mistakes, AScriptThatRunsOutOfTurnsIsAnErrorNamingTheScript) {
  TempDir dir;
  std::string script = dir / "short.json";
  std::ofstream(script) << R"({"turns": [{"toolCalls": [{"name": "t", "arguments": {}}]}]})";
  std::string tool = dir / "t";
  writeExecutable(tool, "#!/bin/sh\ncat >/dev/null\necho '{}'\n");
  std::string app = dir / "a.toml";
  std::ofstream(app) << "[agent]\nname = \"a\"\nprompt = \"go\"\n\n[model]\nkind = \"scripted\"\n"
                     << "script = \"" << script << "\"\n\n[[tools]]\nname = \"t\"\n"
                     << "description = \"d\"\ncommand = [\"" << tool << "\"]\n";
  Outcome run = runLoom({"--home", dir / "home", "run", app, "--json"}, dir);
  EXPECT_EQ(run.json().at("status"), "failed") << run.out;
  EXPECT_NE(run.out.find("short.json"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("answer"), std::string::npos) << run.out;
}

TEST(Mistakes, ASignalTheRunNeverWaitedForIsRefusedUnlessForced) {
  TempDir dir;
  std::string home = dir / "home";
  ASSERT_EQ(runLoom({"--home", home, "run", "example.approval", "--id", "o1"}, dir).exitCode, 0);
  Outcome typo = runLoom({"--home", home, "signal", "o1", "aprove", "true"}, dir);
  EXPECT_EQ(typo.exitCode, 2);
  EXPECT_NE(typo.err.find("not waiting for signal \"aprove\""), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("it waits for \"approve\""), std::string::npos) << typo.err;
  Outcome log = runLoom({"--home", home, "log", "o1"}, dir);
  EXPECT_EQ(log.out.find("SIGNAL_RECEIVED"), std::string::npos) << "nothing was recorded";
  Outcome forced = runLoom({"--home", home, "signal", "o1", "later", "true", "--force"}, dir);
  EXPECT_EQ(forced.exitCode, 0) << forced.err;
  Outcome right = runLoom({"--home", home, "signal", "o1", "approve", "true", "--json"}, dir);
  ASSERT_EQ(right.exitCode, 0) << right.err;
  EXPECT_EQ(right.json().at("status"), "completed");
}

// A number no double holds (1e400) was stored as the non-JSON text Infinity: the run, and
// `loom ls` of the whole home, could not be read any more.
TEST(Mistakes, ANumberOutOfRangeIsRefusedAtTheDoorAndTheHomeStaysReadable) {
  TempDir dir;
  std::string home = dir / "home";
  Outcome run = runLoom({"--home", home, "run", "example.steps", "--input",
                         R"({"steps": 1, "x": 1e400})"},
                        dir);
  EXPECT_EQ(run.exitCode, 2) << run.out;
  EXPECT_NE(run.err.find("out of the range of a double"), std::string::npos) << run.err;
  ASSERT_EQ(runLoom({"--home", home, "run", "example.approval", "--id", "a"}, dir).exitCode, 0);
  Outcome signal = runLoom({"--home", home, "signal", "a", "approve", "-1e400"}, dir);
  EXPECT_EQ(signal.exitCode, 2) << signal.err;
  EXPECT_EQ(runLoom({"--home", home, "ls"}, dir).exitCode, 0);
  Outcome log = runLoom({"--home", home, "log", "a", "--json"}, dir);
  EXPECT_EQ(log.json().as_array().size(), 3u) << "nothing was recorded: " << log.out;
}

TEST(Mistakes, KillingAnEffectNothingUsesIsRefusedUnlessForced) {
  TempDir dir;
  std::string home = dir / "home";
  ASSERT_EQ(runLoom({"--home", home, "run", "example.approval", "--id", "o1"}, dir).exitCode, 0);
  Outcome typo = runLoom({"--home", home, "kill", "example.stpe"}, dir);
  EXPECT_EQ(typo.exitCode, 2) << typo.err;
  EXPECT_NE(typo.err.find("no workflow this program registers uses effect 'example.stpe' and no "
                          "run in this home recorded a step of it, so nothing was stopped"),
            std::string::npos)
      << typo.err;
  EXPECT_NE(typo.err.find("pass --force"), std::string::npos) << typo.err;
  Outcome none = runLoom({"--home", home, "killed", "--json"}, dir);
  EXPECT_TRUE(none.json().at("stops").as_array().empty()) << "the refused stop is not recorded";

  Outcome forced = runLoom({"--home", home, "kill", "example.stpe", "--force"}, dir);
  EXPECT_EQ(forced.exitCode, 0) << forced.err;
  Outcome known = runLoom({"--home", home, "kill", "example.step"}, dir);
  EXPECT_EQ(known.exitCode, 0) << known.err;
  // An agent app's tool is known once a run in this home recorded a step of it.
  std::string examples = std::string(LOOM_SOURCE_DIR) + "/examples/agents/";
  ASSERT_EQ(
      runLoom({"--home", home, "run", examples + "research.toml", "--id", "r1"}, dir).exitCode, 0);
  Outcome tool = runLoom({"--home", home, "kill", "fetch_report"}, dir);
  EXPECT_EQ(tool.exitCode, 0) << tool.err;
  Outcome model = runLoom({"--home", home, "kill", "scripted", "--json"}, dir);
  EXPECT_EQ(model.exitCode, 0) << model.err;
  EXPECT_EQ(model.json().at("changed"), true);
}

}  // namespace
}  // namespace loom::testing
