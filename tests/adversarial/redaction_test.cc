// Secrets stay secret, on the real binary: a pattern rule
// against a tool result holding a 100 kB match is redacted (no crash, no re-run on resume);
// a secret passed in --prompt, returned as the run's output or emitted as a JSON number never
// reaches loom.db or a blob.
#include <gtest/gtest.h>

#include <fstream>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

TEST(Redaction, EverythingJournaledOrOffloadedIsRedactedWhateverItsTypeOrSize) {
  TempDir dir;
  std::string home = dir / "home";
  std::string tool = dir / "leaky";
  writeExecutable(tool,
                  "#!/bin/sh\ncat >/dev/null\n"
                  "printf '{\"token\":\"sk-%s\",\"pin\":31415926535,\"pad\":\"%s\"}' "
                  "\"$(head -c 100000 /dev/zero | tr '\\0' A)\" "
                  "\"$(head -c 3000 /dev/zero | tr '\\0' p)\"\n");
  std::string script = dir / "s.json";
  std::ofstream(script) << R"({"turns": [{"toolCalls": [{"name": "leaky", "arguments": {}}]},
      {"answer": "the prompt said hunter2hunter2"}]})";
  std::string app = dir / "app.toml";
  std::ofstream(app) << "[agent]\nname = \"leak\"\n\n[model]\nkind = \"scripted\"\nscript = \""
                     << script << "\"\n\n[[tools]]\nname = \"leaky\"\ndescription = \"d\"\n"
                     << "command = [\"" << tool << "\"]\n\n"
                     << "[execution.claimCheck]\ntoolIds = [\"leaky\"]\n\n"
                     << "[[security.redact]]\nname = \"key\"\npattern = \"sk-[A-Za-z0-9]+\"\n\n"
                     << "[[security.redact]]\nname = \"pin\"\nvalue = \"31415926535\"\n\n"
                     << "[[security.redact]]\nname = \"pw\"\nvalue = \"hunter2hunter2\"\n";
  Outcome run = runLoom({"--home", home, "run", app, "--id", "r1", "--prompt",
                         "my password is hunter2hunter2", "--json"},
                        dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.json().at("status"), "completed");
  EXPECT_FALSE(folderContains(home, "hunter2hunter2")) << "--prompt or the output reached the home";
  EXPECT_FALSE(folderContains(home, "31415926535")) << "a number secret reached the home";
  EXPECT_FALSE(folderContains(home, "sk-AAAA")) << "the pattern secret reached the home";
  Outcome state = runLoom({"--home", home, "state", "r1"}, dir);
  EXPECT_EQ(state.exitCode, 0) << state.err;
}

TEST(Redaction, APatternRe2CannotCompileIsAConfigErrorNamingTheOptionPath) {
  TempDir dir;
  std::string app = dir / "bad.toml";
  std::ofstream(app) << "[[security.redact]]\nname = \"x\"\npattern = \"(?<=a)b\"\n";
  Outcome check = runLoom({"config", "check", app}, dir);
  EXPECT_NE(check.exitCode, 0);
  EXPECT_NE((check.out + check.err).find("security.redact[0].pattern"), std::string::npos)
      << check.out << check.err;
}

}  // namespace
}  // namespace loom::testing
