// Secrets stay secret: with the documented setup (the master key in
// LOOM_MASTER_KEY, an OpenAI key in OPENAI_API_KEY), a tool that reports its environment sees
// neither, so neither can reach loom.db; a tool's own `env` is set, and `inheritEnv = false`
// passes only the base variables.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

TEST(ToolEnvironment, ToolsNeverInheritTheVariablesLoomReadsSecretsFrom) {
  TempDir dir;
  std::string home = dir / "home";
  std::string reporter = dir / "report-env";
  writeExecutable(reporter,
                  "#!/bin/sh\ncat >/dev/null\n"
                  "printf '{\"key\":\"%s\",\"openai\":\"%s\",\"mine\":\"%s\","
                  "\"parent\":\"%s\",\"path\":\"%s\"}' \"$LOOM_MASTER_KEY\" "
                  "\"$OPENAI_API_KEY\" \"$MINE\" \"$PARENT_ONLY\" \"$PATH\"\n");
  std::string script = dir / "s.json";
  std::ofstream(script) << R"({"turns": [{"toolCalls": [{"name": "inherit", "arguments": {}},
      {"name": "bare", "arguments": {}}]}, {"answer": "ok"}]})";
  std::string app = dir / "app.toml";
  std::ofstream(app) << "[agent]\nname = \"env\"\nprompt = \"go\"\n\n[model]\nkind = \"scripted\"\n"
                     << "script = \"" << script << "\"\n\n"
                     << "[[tools]]\nname = \"inherit\"\ndescription = \"d\"\ncommand = [\""
                     << reporter << "\"]\nenv = { MINE = \"set-by-the-tool-table\" }\n\n"
                     << "[[tools]]\nname = \"bare\"\ndescription = \"d\"\ncommand = [\"" << reporter
                     << "\"]\ninheritEnv = false\n\n"
                     << "[security.keys]\nenv = \"LOOM_MASTER_KEY\"\n\n[compliance.erase]\n";
  std::string key = runLoom({"keys", "new-master"}, dir).out.substr(0, 64);
  std::vector<std::string> env{"LOOM_MASTER_KEY=" + key, "OPENAI_API_KEY=sk-never-to-a-tool",
                               "PARENT_ONLY=from-the-parent"};
  Outcome run = runLoom({"--home", home, "run", app, "--id", "e1"}, dir, env);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  Outcome log = runLoom({"--home", home, "log", "e1", "--json"}, dir, env);
  ASSERT_EQ(log.exitCode, 0) << log.err;
  std::string inherit, bare;
  json::value events = log.json();
  for (const auto& e : events.as_array()) {
    const auto& o = e.as_object();
    if (!o.contains("effectId")) continue;
    std::string text = json::toText(o.at("output"));
    if (o.at("effectId") == "inherit") inherit = text;
    if (o.at("effectId") == "bare") bare = text;
  }
  ASSERT_FALSE(inherit.empty()) << log.out;
  EXPECT_NE(inherit.find(R"("key":"")"), std::string::npos) << inherit;
  EXPECT_NE(inherit.find(R"("openai":"")"), std::string::npos) << inherit;
  EXPECT_NE(inherit.find(R"("mine":"set-by-the-tool-table")"), std::string::npos) << inherit;
  EXPECT_NE(inherit.find(R"("parent":"from-the-parent")"), std::string::npos) << inherit;
  EXPECT_NE(bare.find(R"("parent":"")"), std::string::npos) << "inheritEnv = false: " << bare;
  EXPECT_EQ(bare.find(R"("path":"")"), std::string::npos) << "PATH is a base variable: " << bare;
  for (const char* file : {"loom.db", "loom.db-wal"}) {
    std::string bytes = fileText(home + "/" + file);
    EXPECT_EQ(bytes.find(key), std::string::npos) << "the master key reached " << file;
    EXPECT_EQ(bytes.find("sk-never-to-a-tool"), std::string::npos) << file;
  }
}

}  // namespace
}  // namespace loom::testing
