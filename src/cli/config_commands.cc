// `loom config check FILE`: validates a loom.toml (or an agent app file) the way boot and
// `loom run` would, without opening or creating anything, and prints the validated
// configuration or every problem at once.
#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>

#include "command.h"

namespace loom::cli {

Action setupConfig(CLI::App& command, HomeSession& session) {
  command.require_subcommand(1);
  CLI::App* check = command.add_subcommand(
      "check", "Validate a config file and print it, or print every problem at once");
  auto file = std::make_shared<std::string>();
  auto asJson = std::make_shared<bool>(false);
  check->add_option("FILE", *file, "The loom.toml or agent app file to check")
      ->required()
      ->type_name("");
  check->add_flag("--json", *asJson,
                  "Print exactly one JSON object instead of text: {\"file\", \"valid\", "
                  "\"problems\": [{\"path\", \"message\"}], "
                  "\"report\"} (report: the text printed without --json)");
  check->footer(
      "Prints \"<file>: valid\", then one \"path = value\" line per option (defaults filled\n"
      "in, literal secrets hidden) and the middleware chain boot would build; for an agent\n"
      "app also its model and tools, with the script and tool commands resolved against the\n"
      "file's folder. Exit 0. Otherwise prints every problem, one per line as \"path:\n"
      "message\", and exits 1. For an agent app it runs the checks boot runs with the app's\n"
      "tasks: each execution.claimCheck.toolIds entry must name one of its [[tools]], never\n"
      "its model (an MCP server's tools are known once `loom run` starts it, so an id that\n"
      "may be one of them is printed as a note). Opens, creates and runs nothing.\n"
      "docs/config.md lists every option.");
  return [&session, check, file, asJson] {
    if (check->parsed()) {
      app::ConfigCheck result = agent_app::checkAppConfigFile(*file);
      if (*asJson) {
        json::array problems;
        for (const auto& p : result.problems) {
          problems.push_back(json::object{{"path", p.path}, {"message", p.message}});
        }
        session.out() << json::toText(json::object{{"file", *file},
                                                   {"valid", result.ok},
                                                   {"problems", std::move(problems)},
                                                   {"report", result.text}})
                      << std::endl;
        return result.ok ? kExitOk : kExitFailure;
      }
      session.out() << result.text << std::flush;
      if (result.ok) return kExitOk;
      printError(*file +
                 " is not a valid configuration; fix the problems listed above and "
                 "check it again");
      return kExitFailure;
    }
    throw UsageError("`loom config` needs a subcommand: `loom config check FILE`");
  };
}

}  // namespace loom::cli
