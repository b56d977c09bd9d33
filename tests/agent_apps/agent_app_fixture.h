// Shared set-up of the agent app tests: a fresh folder with an app file whose tools are the
// shipped examples/agents/tools (absolute paths) and whose scripted model follows a script
// written next to it; helpers to run `loom` on a home in that folder with the tools' witness
// file (LOOM_TOOL_WITNESS) set, and to read back the steps an execution recorded.
#pragma once

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <string>
#include <vector>

#include "support/loom_process.h"

namespace loom::testing {

inline std::string exampleTool(std::string_view name) {
  return std::string(LOOM_SOURCE_DIR) + "/examples/agents/tools/" + std::string(name);
}

// A script of `pages` turns calling fetch_report with page = turn, then an answer.
inline std::string fetchPagesScript(int pages) {
  return R"({"generate": {"turns": )" + std::to_string(pages) +
         R"(, "toolCalls": [{"name": "fetch_report", "arguments": {"page": "{turn}"}}],
             "answer": "Read every page."}})";
}

class AgentAppTest : public ::testing::Test {
 protected:
  // Writes `text` to a file in the test's folder; returns its path.
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  // Writes app.toml (agent "research") and script.json; `tools` is the [[tools]] text.
  std::string writeApp(const std::string& script, const std::string& tools,
                       const std::string& extra = "") {
    write("script.json", script);
    return write("app.toml",
                 "[agent]\nname = \"research\"\nprompt = \"Read the report.\"\n"
                 "maxTurns = 50\n\n[model]\nkind = \"scripted\"\n"
                 "script = \"script.json\"\n\n" +
                     tools + extra);
  }

  // writeApp with a fetch_report tool (approval required) that is a copy at `tool`, inside the
  // folder: part of the app's code version, so editing it makes a new one.
  std::string writeAppWithItsOwnTool(const std::filesystem::path& tool) {
    std::filesystem::create_directories(tool.parent_path());
    std::filesystem::copy_file(exampleTool("fetch_report"), tool);
    return writeApp(fetchPagesScript(2),
                    "[[tools]]\nname = \"fetch_report\"\nrequiresApproval = true\n"
                    "command = [\"tools/fetch_report\"]\n");
  }

  static std::string fetchReportTool(const std::string& options = "") {
    return "[[tools]]\nname = \"fetch_report\"\ncommand = [\"" + exampleTool("fetch_report") +
           "\"" + options + "]\n";
  }

  // Runs `loom run app --id id` and SIGKILLs it once the witness file has `lines` lines.
  void runAndKillAfter(const std::string& app, const std::string& id, std::size_t lines) {
    Child run({"--home", home_, "run", app, "--id", id}, dir_, env());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (readLines(witness_).size() < lines) {
      ASSERT_FALSE(run.exited()) << "the run ended before it could be killed";
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the run made no progress";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    run.kill(SIGKILL);
    ASSERT_EQ(run.wait().termSignal, SIGKILL);
  }

  Outcome loom(std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home_});
    return runLoom(args, dir_, env());
  }
  std::vector<std::string> env() const { return {"LOOM_TOOL_WITNESS=" + witness_}; }

  // The recorded events of `id` (`loom log --json`).
  json::array events(const std::string& id) {
    Outcome o = loom({"log", id, "--json"});
    EXPECT_EQ(o.exitCode, 0) << o.err;
    json::value v = o.json();
    return v.is_array() ? v.as_array() : json::array{};
  }

  // STEP_COMPLETED events of `id` whose step id contains `part` (":model", ":tool:").
  int recordedSteps(const std::string& id, std::string_view part) {
    int n = 0;
    for (const auto& e : events(id)) {
      if (e.at("type") == "STEP_COMPLETED" &&
          std::string_view(e.at("stepId").as_string()).find(part) != std::string_view::npos) {
        ++n;
      }
    }
    return n;
  }

  TempDir dir_;
  std::string home_ = dir_ / "home";
  std::string witness_ = dir_ / "witness.txt";
};

}  // namespace loom::testing
