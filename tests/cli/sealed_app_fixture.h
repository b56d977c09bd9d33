// Shared set-up of the CLI tests on a sealed home made with the compliance example's settings
// (examples/agents/compliance.toml): an agent app whose fetch_report tool is claim-checked, the
// master key in LOOM_MASTER_KEY, logs sealed under each run's subject; and `loom` run on that
// home with (or without) the key.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/home_blobs.h"
#include "support/loom_process.h"

namespace loom::testing {

inline const std::string kExampleAgents = std::string(LOOM_SOURCE_DIR) + "/examples/agents";

// An agent app like examples/agents/compliance.toml, written into `dir`, with `extra` lines
// appended (more tools, another store) and `tools` for its [[tools]] tables.
inline std::string writeApp(const TempDir& dir, const std::string& name,
                            const std::string& script, const std::string& tools,
                            const std::string& extra = "") {
  std::string path = dir / name;
  std::ofstream out(path);
  out << "[agent]\nname = \"compliance\"\nprompt = \"read\"\nmaxTurns = 20\n\n"
      << "[model]\nkind = \"scripted\"\nscript = \"" << script << "\"\n\n"
      << tools << "\n"
      << "[execution.claimCheck]\ntoolIds = [\"fetch_report\"]\n\n"
      << "[security.keys]\nenv = \"LOOM_MASTER_KEY\"\n\n[compliance.erase]\n"
      << extra;
  return path;
}

inline std::string fetchTool(const std::string& more = "") {
  return "[[tools]]\nname = \"fetch_report\"\ndescription = \"one page\"\ncommand = [\"" +
         kExampleAgents + "/tools/fetch_report\"" + more + "]\n";
}

inline std::string writeScript(const TempDir& dir, const std::string& name,
                               const std::string& turns) {
  std::string path = dir / name;
  std::ofstream(path) << "{\"turns\": [" << turns << "]}";
  return path;
}

inline std::string fetchTurns(int pages) {
  std::string turns;
  for (int p = 1; p <= pages; ++p) {
    turns += "{\"toolCalls\": [{\"name\": \"fetch_report\", \"arguments\": {\"page\": " +
             std::to_string(p) + "}}]},";
  }
  return turns + "{\"answer\": \"done\"}";
}

inline std::string masterKey(const TempDir& dir) {
  Outcome o = runLoom({"keys", "new-master"}, dir);
  return o.out.substr(0, o.out.find('\n'));
}

// The blobs the home's content store holds (packed rows and files).
inline std::vector<std::string> blobs(const std::string& home) { return homeBlobAddresses(home); }

class SealedAppCli : public ::testing::Test {
 protected:
  Outcome loom(std::vector<std::string> args, bool withKey = true) {
    args.insert(args.begin(), {"--home", home_});
    return runLoom(args, dir_, withKey ? env_ : std::vector<std::string>{"LOOM_MASTER_KEY="});
  }

  TempDir dir_;
  std::string home_ = dir_ / "home";
  std::vector<std::string> env_{"LOOM_MASTER_KEY=" + masterKey(dir_)};
};

}  // namespace loom::testing
