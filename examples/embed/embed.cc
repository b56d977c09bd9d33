// An embedder's program built against the installed Loom package (README, "Embedding"): it
// registers a workflow and an agent (a C++ tool and a scripted model), boots Loom with a Config
// written in code (claim-check for the tool, a redaction rule, a retry layer) and runs both;
// the agent parks for a person's approval. Then it boots again, as after a restart, approves,
// and the agent finishes: its recorded turns replay, and no tool runs twice.
//   embed <home folder>
// The same program is also a `loom` command line over its own workflows and agent, with that
// Config in code as the default (or a --config loom.toml instead):
//   embed loom [loom options] run helper --input '"How is churn?"'
#include <atomic>
#include <iostream>

#include "loom/loom.h"

namespace {

using loom::json::value;

// How often the lookup tool really ran. Atomic: the tool calls of one turn run concurrently
// (agent.parallelToolCalls), so a tool must be thread-safe.
std::atomic<int> lookups{0};

void registerHello(loom::workflow::WorkflowRegistry& workflows,
                   loom::effects::TaskRegistry& tasks) {
  tasks.add(loom::effects::TaskDefinition{.id = "hello.greet",
                                          .kind = std::string(loom::effects::kKindFlow),
                                          .description = "greets a name"},
            [](const loom::effects::EffectContext&, value input) {
              return value("hello " + std::string(input.at("name").as_string()));
            });
  workflows.add("hello", "greets its input's name, durably",
                [](loom::workflow::WorkflowContext& ctx) {
                  return ctx.effect("greet", "hello.greet", ctx.input());
                });
}

void registerHelper(loom::workflow::WorkflowRegistry& workflows,
                    loom::effects::TaskRegistry& tasks) {
  value script = loom::json::parse(R"({"turns": [
      {"toolCalls": [{"name": "lookup", "arguments": {"topic": "churn"}}]},
      {"toolCalls": [{"name": "publish", "arguments": {"text": "Churn is down."}}]},
      {"answer": "Churn is down; published."}]})",
                                   "the helper's script");
  loom::agent::registerModel(
      tasks, std::make_shared<loom::providers::ScriptedModel>("scripted", std::move(script)));
  loom::agent::ToolDefinition lookup{"lookup", "looks up notes on a topic", nullptr, false, false};
  loom::agent::registerTool(
      tasks, std::make_shared<loom::agent::FunctionTool>(
                 lookup, [](const loom::effects::EffectContext&, const value& arguments) {
                   ++lookups;
                   std::string topic(arguments.at("topic").as_string());
                   // Big enough for claim-check to offload; it holds a secret to redact.
                   return value{{"topic", topic},
                                {"notes", std::string(4000, 'n') + " key=sk-embed-secret-1"}};
                 }));
  // A person approves each call before it runs: the run parks until then.
  loom::agent::ToolDefinition publish{"publish", "publishes a text", nullptr, false, true};
  loom::agent::registerTool(
      tasks, std::make_shared<loom::agent::FunctionTool>(
                 publish, [](const loom::effects::EffectContext&, const value& arguments) {
                   return value{{"published", arguments.at("text")}};
                 }));
  loom::agent::AgentOptions options;
  options.model = "scripted";
  options.tools = {lookup, publish};
  loom::agent::registerAgentWorkflow(workflows, "helper", std::move(options));
}

loom::app::Config configFor(const std::string& home) {
  loom::app::Config config;
  config.storage.home = home;
  loom::middleware::ClaimCheckConfig claimCheck;
  claimCheck.toolIds = std::vector<std::string>{"lookup"};
  config.execution.claimCheck = claimCheck;
  config.security.redact = {{.name = "embed-key", .pattern = "sk-[a-z0-9-]+"}};
  config.execution.effectMiddleware = {std::make_shared<loom::middleware::RetryMiddleware>(
      loom::middleware::RetryConfig{.attempts = 3})};
  return config;
}

bool expect(bool ok, const std::string& what) {
  std::cout << (ok ? "ok:     " : "FAILED: ") << what << "\n";
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  loom::workflow::WorkflowRegistry workflows;
  loom::effects::TaskRegistry tasks;
  registerHello(workflows, tasks);
  registerHelper(workflows, tasks);
  if (argc >= 2 && std::string(argv[1]) == "loom") {
    // argv[1] becomes the program name; the Config in code keeps the home "./.loom" unless
    // --home or LOOM_HOME says otherwise.
    return loom::cli::main(argc - 1, argv + 1, workflows, tasks,
                           loom::app::defineConfig(configFor("./.loom")));
  }
  if (argc != 2) {
    std::cerr << "usage: embed <home folder> | embed loom <loom arguments>\n";
    return 2;
  }
  try {
    auto config = loom::app::defineConfig(configFor(argv[1]));
    bool ok = true;
    {
      auto app = loom::app::boot(config, workflows, tasks);
      auto hello = app->runtime().start("hello", value{{"name", "embedder"}}, {.id = "hello-1"});
      ok &= expect(hello.status == loom::kernel::ExecutionStatus::kCompleted &&
                       hello.output == value("hello embedder"),
                   "workflow hello: " + loom::json::toText(hello.output));
      auto helper = app->runtime().start("helper", value("How is churn?"), {.id = "helper-1"});
      ok &= expect(helper.status == loom::kernel::ExecutionStatus::kParked,
                   "agent helper parked for approval (signal " + helper.waitingFor + ")");
      std::string log;
      for (const auto& event : app->store().read("helper-1")) log += loom::kernel::toText(event);
      ok &= expect(log.find("__loomClaimCheck") != std::string::npos,
                   "the tool's result was offloaded behind an envelope");
      ok &= expect(log.find("sk-embed-secret-1") == std::string::npos,
                   "the secret was redacted from the log");
    }
    auto again = loom::app::boot(config, workflows, tasks);  // a restart
    auto done = again->runtime().signal("helper-1", "approve:helper#turn:2:tool:0",
                                        value{{"approved", true}});
    ok &= expect(done.status == loom::kernel::ExecutionStatus::kCompleted && lookups == 1,
                 "approved after a restart: " + loom::json::toText(done.output) + " (" +
                     std::to_string(done.replayedSteps) + " recorded steps replayed, lookup ran " +
                     std::to_string(lookups.load()) + " time)");
    return ok ? 0 : 1;
  } catch (const loom::Error& e) {
    std::cerr << "embed: " << e.what() << "\n";
    return 1;
  }
}
