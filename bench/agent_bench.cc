// The agent loop at length: a 200-turn scripted agent whose tool
// returns 1.5-4 kB of JSON per call (sizes uniform from a fixed seed: the generator of
// examples/agents/tools/fetch_report, reimplemented here byte for byte), run by a booted app
// on SQLite with durable commits (storage.eventStore.durability = "full"):
//   1. wall time of the whole run with an in-process tool and with the subprocess tool of
//      examples/agents/long-run.toml, with execution.journal.modelInput = "delta";
//   2. folded agent state bytes and log bytes, in both journaling modes;
//   3. log bytes at 50 vs 200 turns (delta: linear in turns; full: quadratic);
//   4. resume of a finished-but-parked 200-turn run (its last tool needs approval, which has
//      been signalled): time from opening the store (boot) to the first new step.
// Also the same run with durability "normal" and the measured fsync cost, to tell the loop's
// own cost from the disk's. Run: ./build/release/bench/loom_agent_bench [repetitions]
// (`loom_agent_bench N resume` measures the resume alone and `N loop` a run without fsync,
// for a profiler; `N replaycheck` the replay check of 50 recorded runs, N rounds)
// (docs/benchmarks.md, "Agent loop"). Not a Google Benchmark: each measurement is a whole
// run, reported as the median of the repetitions.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "effects/step_ids.h"
#include "loom/agent/agent_state.h"
#include "loom/agent/model_input.h"
#include "loom/agent_app/agent_app.h"
#include "loom/app/app.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/workflow/replay_check.h"
#include "report_pages.h"
#include "support/temp_dir.h"

namespace {

using namespace loom;
namespace fs = std::filesystem;
using loom::bench::fetchReport;
using Clock = std::chrono::steady_clock;

const fs::path kLongRunApp = fs::path(LOOM_SOURCE_DIR) / "examples/agents/long-run.toml";
constexpr std::string_view kLoop = "long-run";

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using TempHome = loom::testing::TempDir;

// The model: fetch_report with page = turn for turns 1..pages; then, with an approval tool,
// one call of `publish`; then the answer. Deterministic from the step id.
class PagesModel : public agent::Model {
 public:
  PagesModel(int64_t pages, bool publish) : pages_(pages), publish_(publish) {}
  const std::string& id() const override { return id_; }
  json::value complete(const effects::EffectContext& ctx, const agent::ModelRequest&) override {
    int64_t turn = effects::parseAgentStepId(ctx.stepId)->turn;
    std::string callId = "call_" + std::to_string(turn);
    if (turn <= pages_) {
      return json::object{
          {"role", "assistant"},
          {"toolCalls", json::array{json::object{{"id", callId},
                                                 {"name", "fetch_report"},
                                                 {"arguments", json::object{{"page", turn}}}}}}};
    }
    if (publish_ && turn == pages_ + 1) {
      return json::object{
          {"role", "assistant"},
          {"toolCalls", json::array{json::object{{"id", callId}, {"name", "publish"}}}}};
    }
    return json::object{{"role", "assistant"}, {"content", "Read every page."}};
  }

 private:
  std::string id_ = "scripted";
  int64_t pages_;
  bool publish_;
};

struct Variant {
  int64_t turns = 200;
  std::string modelInput = "delta";
  std::string durability = "full";
  bool subprocess = false;
  bool publish = false;  // a last tool that requires approval: the run parks before it
};

struct RunFigures {
  double seconds = 0;
  int64_t logBytes = 0;
  int64_t stateBytes = 0;  // folded agent state
  int64_t steps = 0;
};

// Everything a booted agent app needs, built like `loom run examples/agents/long-run.toml`
// (with the variant's model, tool and options).
struct Setup {
  Setup(const Variant& v, const fs::path& home, std::function<void()> onPublish = {}) {
    agent_app::AgentApp app = agent_app::loadAgentApp(kLongRunApp);
    agent::AgentOptions options = app.options;
    options.onWarn = [](std::string_view) {};  // the state-growth warning fires; not measured
    options.modelInput = agent::modelInputModeFromName(v.modelInput);
    options.maxTurns = v.turns + 2;
    agent::registerModel(tasks, std::make_shared<PagesModel>(v.turns, v.publish));
    if (v.subprocess) {
      agent::registerTool(tasks, app.tools.at(0));
    } else {
      agent::registerTool(tasks, std::make_shared<agent::FunctionTool>(
                                     app.tools.at(0)->definition(),
                                     [](const effects::EffectContext&, const json::value& args) {
                                       return fetchReport(args.at("page").as_int64());
                                     }));
    }
    if (v.publish) {
      agent::ToolDefinition publish{"publish", "publishes the summary", nullptr, false, true};
      agent::registerTool(
          tasks, std::make_shared<agent::FunctionTool>(
                     publish, [onPublish](const effects::EffectContext&, const json::value&) {
                       if (onPublish) onPublish();
                       return json::value("published");
                     }));
      options.tools.push_back(publish);
    }
    agent::registerAgentWorkflow(workflows, std::string(kLoop), options);
    app::Config c = *app.config;
    c.storage.home = home.string();
    c.storage.eventStore.durability = v.durability;
    c.execution.journal.modelInput = v.modelInput;
    config = app::defineConfig(std::move(c));
  }
  std::unique_ptr<app::App> boot() {
    return app::boot(config, workflows, tasks, app::BootOptions{.workers = 1});
  }

  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  std::shared_ptr<const app::Config> config;
};

RunFigures runOnce(const Variant& v) {
  TempHome home;
  Setup setup(v, home.path());
  auto app = setup.boot();
  auto start = Clock::now();
  auto r = app->runtime().start(kLoop, json::object{{"prompt", "Read every page."}}, {.id = "b"});
  RunFigures f;
  f.seconds = secondsSince(start);
  if (r.status != kernel::ExecutionStatus::kCompleted) {
    std::fprintf(stderr, "agent_bench: the run ended %s: %s\n",
                 std::string(kernel::statusName(r.status)).c_str(), json::toText(r.error).c_str());
    std::exit(1);
  }
  auto info = app->store().info("b");
  f.logBytes = info->logBytes;
  f.steps = info->steps;
  f.stateBytes =
      static_cast<int64_t>(json::textBytes(agent::foldAgentState(app->store().read("b"), kLoop)));
  return f;
}

RunFigures measure(const Variant& v, int repetitions) {
  std::vector<double> seconds;
  RunFigures f;
  for (int i = 0; i < repetitions; ++i) {
    f = runOnce(v);
    seconds.push_back(f.seconds);
  }
  f.seconds = median(seconds);
  return f;
}

struct ResumeFigures {
  double toFirstNewStep = 0;  // boot (open the stores) + resume until publish runs
  double boot = 0;
  int64_t replayed = 0;
};

// A parked 200-turn run whose approval is signalled, then resumed by a fresh app.
ResumeFigures measureResume(int repetitions) {
  Variant v;
  v.publish = true;
  TempHome parked;
  {
    Variant fast = v;
    fast.durability = "normal";  // building the log is not what is measured
    Setup setup(fast, parked.path());
    auto app = setup.boot();
    auto r = app->runtime().start(kLoop, json::object{{"prompt", "Read every page."}}, {.id = "p"});
    if (r.status != kernel::ExecutionStatus::kParked) {
      std::fprintf(stderr, "agent_bench: the approval run did not park\n");
      std::exit(1);
    }
    auto info = app->store().info("p");
    app->store().append("p", info->nextSeq,
                        {kernel::signalReceived(r.waitingFor, json::object{{"approved", true}},
                                                systemClock()->nowMillis())});
  }
  std::vector<double> total, boot;
  ResumeFigures f;
  for (int i = 0; i < repetitions; ++i) {
    TempHome home;
    fs::copy(parked.path(), home.path(), fs::copy_options::recursive);
    Clock::time_point start, firstStep;
    bool published = false;
    Setup setup(v, home.path(), [&] {
      if (!published) firstStep = Clock::now();
      published = true;
    });
    start = Clock::now();
    auto app = setup.boot();
    double booted = secondsSince(start);
    auto r = app->runtime().resume("p");
    if (!published || r.status != kernel::ExecutionStatus::kCompleted) {
      std::fprintf(stderr, "agent_bench: the resume did not run publish\n");
      std::exit(1);
    }
    total.push_back(std::chrono::duration<double>(firstStep - start).count());
    boot.push_back(booted);
    f.replayed = r.replayedSteps;
  }
  f.toFirstNewStep = median(total);
  f.boot = median(boot);
  return f;
}

// Median time of one fsync'ed 3 kB append to a file in the temp folder: the disk's floor
// for a durable commit.
double fsyncMillis() {
  TempHome dir;
  int fd = ::open((dir.path() / "probe").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string block(3000, 'x');
  std::vector<double> times;
  for (int i = 0; i < 100; ++i) {
    auto start = Clock::now();
    if (::write(fd, block.data(), block.size()) < 0 || ::fsync(fd) != 0) break;
    times.push_back(secondsSince(start) * 1000);
  }
  ::close(fd);
  return times.empty() ? 0 : median(times);
}

// `loom replay-check`'s core over `runs` recorded 200-turn runs (delta journaling), against
// reading their logs alone (the floor: the check reads each log once), in interleaved rounds.
void measureReplayCheck(int runs, int rounds) {
  Variant v;
  v.durability = "normal";  // recording is not what is measured
  TempHome home;
  Setup setup(v, home.path());
  auto app = setup.boot();
  for (int i = 0; i < runs; ++i) {
    app->runtime().start(kLoop, json::object{{"prompt", "Read every page."}},
                         {.id = "r" + std::to_string(i)});
  }
  std::vector<double> check, read;
  for (int round = 0; round < rounds; ++round) {
    auto start = Clock::now();
    int64_t events = 0;
    for (const auto& info : app->store().list({})) events += app->store().read(info.id).size();
    read.push_back(runs / secondsSince(start));
    start = Clock::now();
    auto results = workflow::checkReplays(app->store(), setup.workflows, setup.tasks);
    check.push_back(runs / secondsSince(start));
    for (const auto& r : results) {
      if (r.outcome != "matched") {
        std::fprintf(stderr, "agent_bench: %s did not match: %s %s\n", r.executionId.c_str(),
                     r.outcome.c_str(), r.recorded.c_str());
        std::exit(1);
      }
    }
    if (events == 0) std::exit(1);
  }
  auto range = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    char text[96];
    std::snprintf(text, sizeof text, "median %.0f (%.0f to %.0f)", v[v.size() / 2], v.front(),
                  v.back());
    return std::string(text);
  };
  std::printf("replay check of %d 200-turn runs, %d rounds: %s runs/s; reading their logs "
              "alone: %s runs/s\n",
              runs, rounds, range(check).c_str(), range(read).c_str());
}

void row(const char* what, const RunFigures& f) {
  std::printf("| %s | %lld | %.3f s | %.1f KB | %.1f KB |\n", what, static_cast<long long>(f.steps),
              f.seconds, f.logBytes / 1000.0, f.stateBytes / 1000.0);
}

}  // namespace

int main(int argc, char** argv) {
  int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  if (argc > 2 && std::string_view(argv[2]) == "resume") {  // for profiling the resume alone
    ResumeFigures r = measureResume(repetitions);
    std::printf("resume: %.2f ms (boot %.2f ms)\n", r.toFirstNewStep * 1000, r.boot * 1000);
    return 0;
  }
  if (argc > 2 && std::string_view(argv[2]) == "replaycheck") {  // `loom replay-check`'s speed
    measureReplayCheck(50, repetitions);
    return 0;
  }
  if (argc > 2 && std::string_view(argv[2]) == "loop") {  // the loop's CPU cost, for a profiler
    Variant normal;
    normal.durability = "normal";
    std::printf("200 turns, durability normal: %.3f s\n", measure(normal, repetitions).seconds);
    return 0;
  }
  std::printf("repetitions: %d (medians); fsync of a 3 kB append here: %.2f ms\n\n", repetitions,
              fsyncMillis());
  std::printf("| run (durability full unless noted) | steps | wall | log | agent state |\n");
  std::printf("|---|---|---|---|---|\n");
  Variant v;
  RunFigures durable = measure(v, repetitions);
  row("200 turns, delta, in-process tool", durable);
  Variant sub = v;
  sub.subprocess = true;
  row("200 turns, delta, subprocess tool", measure(sub, repetitions));
  Variant normal = v;
  normal.durability = "normal";
  RunFigures undurable = measure(normal, repetitions);
  row("200 turns, delta, in-process tool, durability normal", undurable);
  Variant full = v;
  full.modelInput = "full";
  row("200 turns, full, in-process tool", measure(full, repetitions));
  Variant d50 = v;
  d50.turns = 50;
  RunFigures delta50 = measure(d50, repetitions);
  row("50 turns, delta, in-process tool", delta50);
  Variant f50 = full;
  f50.turns = 50;
  row("50 turns, full, in-process tool", measure(f50, repetitions));
  std::printf(
      "\nper durable commit: %.2f ms (the first run minus its durability-normal twin, "
      "over its %lld steps, one commit each)\n",
      (durable.seconds - undurable.seconds) * 1000 / static_cast<double>(durable.steps),
      static_cast<long long>(durable.steps));
  ResumeFigures r = measureResume(std::max(repetitions, 5));
  std::printf(
      "resume of a parked 200-turn run (approval signalled): %.2f ms from opening the store to "
      "the first new step (boot %.2f ms; %lld steps replayed)\n",
      r.toFirstNewStep * 1000, r.boot * 1000, static_cast<long long>(r.replayed));
  return 0;
}
