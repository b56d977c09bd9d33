#include "long_run_bench/long_run_bench.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "claim_check_bench/claim_check_bench.h"
#include "effects/step_ids.h"
#include "loom/agent/agent_loop.h"
#include "loom/agent/model.h"
#include "loom/app/app.h"
#include "loom/providers/subprocess_tool.h"
#include "loom/util/error.h"
#include "util/markdown.h"
#include "util/unique_fd.h"

namespace loom::long_run_bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr const char* kId = "long";

double millisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Turns 1..pages call fetch_report(page = turn), the next calls `publish` (approval-gated, so
// the run parks there), then the model answers. Deterministic from the step id.
class PagesModel : public agent::Model {
 public:
  explicit PagesModel(int64_t pages) : pages_(pages) {}
  const std::string& id() const override { return id_; }
  json::value complete(const effects::EffectContext& ctx, const agent::ModelRequest&) override {
    int64_t turn = effects::parseAgentStepId(ctx.stepId)->turn;
    std::string tool = turn <= pages_ ? "fetch_report" : turn == pages_ + 1 ? "publish" : "";
    if (tool.empty()) return json::object{{"role", "assistant"}, {"content", "Published."}};
    json::object call{{"id", "call_" + std::to_string(turn)},
                      {"name", tool},
                      {"arguments", json::object{{"page", turn}}}};
    return json::object{{"role", "assistant"}, {"toolCalls", json::array{std::move(call)}}};
  }

 private:
  int64_t pages_;
  std::string id_ = "scripted";
};

struct Row {
  int64_t turns;
  std::string tool;
  std::string claimCheck;
  std::string snapshots;
  fs::path home;
  uint32_t seed;
};

// The app of one row, with the registries it borrows.
struct BenchApp {
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  std::unique_ptr<app::App> app;
};

std::unique_ptr<BenchApp> bootApp(const Row& row) {
  auto b = std::make_unique<BenchApp>();
  agent::registerModel(b->tasks, std::make_shared<PagesModel>(row.turns));
  agent::ToolDefinition fetch{"fetch_report", "Fetches one page of the quarterly report.", nullptr};
  if (row.tool == "subprocess") {
    providers::SubprocessToolOptions o;
    // A distinct result per page (its number, then the same 1.5-4 kB body), as a real tool's.
    o.command = {"/bin/sh", "-c",
                 "p=$(tr -dc 0-9); printf '{\"page\":%s,\"body\":\"%s\"}' \"$p\" \"$(cat \"$0\")\"",
                 (row.home / "body.txt").string()};
    agent::registerTool(b->tasks, std::make_shared<providers::SubprocessTool>(fetch, o));
  } else {
    uint32_t seed = row.seed;
    agent::registerTool(b->tasks,
                        std::make_shared<agent::FunctionTool>(
                            fetch, [seed](const effects::EffectContext&, const json::value& a) {
                              return claim_check_bench::reportFor(seed, a.at("page").as_int64());
                            }));
  }
  agent::ToolDefinition publish{"publish", "Publishes the summary.", nullptr, false, true};
  agent::registerTool(b->tasks, std::make_shared<agent::FunctionTool>(
                                    publish, [](const effects::EffectContext&, const json::value&) {
                                      return json::value("published");
                                    }));
  agent::AgentOptions agentOptions;
  agentOptions.model = "scripted";
  agentOptions.tools = {fetch, publish};
  agentOptions.maxTurns = row.turns + 2;
  agent::registerAgentWorkflow(b->workflows, "research", agentOptions);
  app::Config config;
  config.storage.home = row.home.string();
  if (row.snapshots == "off") config.execution.snapshotEveryEvents = 0;
  if (row.claimCheck == "on") {
    middleware::ClaimCheckConfig c;
    c.toolIds = std::vector<std::string>{"fetch_report"};
    config.execution.claimCheck = std::move(c);
  }
  b->app = app::boot(app::defineConfig(std::move(config)), b->workflows, b->tasks);
  return b;
}

struct ChildOutcome {
  json::object report;
  struct rusage usage {};
};

// Runs `fn` in a forked child and returns what it reported and its rusage.
template <typename Fn>
ChildOutcome inChild(Fn fn) {
  Pipe pipe = openPipe();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw UnavailableError("bench: fork failed");
  if (pid == 0) {
    pipe.read = UniqueFd();
    std::string text;
    try {
      text = json::toText(fn());
    } catch (const std::exception& e) {
      text = json::toText(json::object{{"error", e.what()}});
    }
    ssize_t ignored = ::write(pipe.write.get(), text.data(), text.size());
    (void)ignored;
    std::_Exit(0);
  }
  pipe.write = UniqueFd();
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe.read.get(), buf, sizeof buf)) > 0;) text.append(buf, n);
  ChildOutcome out;
  int status = 0;
  ::wait4(pid, &status, 0, &out.usage);
  if (text.empty()) throw InternalError("bench: a child process ended without a report");
  out.report = json::parse(text, "bench child report").as_object();
  if (const auto* e = out.report.if_contains("error")) {
    throw InternalError("bench: " + std::string(e->as_string()));
  }
  return out;
}

double cpuSeconds(const struct rusage& u) {
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

int64_t peakRss(const struct rusage& u) { return static_cast<int64_t>(u.ru_maxrss) * 1024; }

double selfCpuSeconds() {
  struct rusage self {};
  ::getrusage(RUSAGE_SELF, &self);
  return cpuSeconds(self);
}

void expectParked(const workflow::RunResult& r, const char* what) {
  if (r.status != kernel::ExecutionStatus::kParked) {
    throw InternalError(std::string(what) + " ended " + std::string(kernel::statusName(r.status)) +
                        ", not parked at the approval");
  }
}

// The disk a home takes: allocated blocks of every file in it (the tool's body.txt aside).
int64_t diskBytes(const fs::path& home) {
  int64_t bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(home)) {
    struct stat st {};
    if (entry.path().filename() == "body.txt" || ::lstat(entry.path().c_str(), &st) != 0) continue;
    bytes += static_cast<int64_t>(st.st_blocks) * 512;
  }
  return bytes;
}

// `loom --home H state long` of the real CLI: wall time and peak RSS.
void measureState(const std::string& loom, const Row& row, LongRunBenchRow& out) {
  std::fflush(nullptr);
  auto started = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) throw UnavailableError("bench: fork failed");
  if (pid == 0) {
    int devNull = ::open("/dev/null", O_WRONLY);
    ::dup2(devNull, STDOUT_FILENO);
    std::string home = row.home.string();
    ::execl(loom.c_str(), loom.c_str(), "--home", home.c_str(), "state", kId,
            static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  struct rusage usage {};
  int status = 0;
  ::wait4(pid, &status, 0, &usage);
  out.stateMillis = millisSince(started);
  out.statePeakRssBytes = peakRss(usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw InternalError("bench: `loom state` of the " + std::to_string(row.turns) +
                        "-turn run failed (status " + std::to_string(status) + ")");
  }
}

LongRunBenchRow runRow(const LongRunBenchOptions& o, const Row& row) {
  fs::remove_all(row.home);
  fs::create_directories(row.home);
  // Words and spaces only: safe inside the subprocess tool's printf.
  std::ofstream(row.home / "body.txt")
      << claim_check_bench::reportFor(o.seed, 1).at("body").as_string().c_str();
  LongRunBenchRow out{row.turns, row.tool, row.claimCheck, row.snapshots};
  ChildOutcome ran = inChild([&] {
    auto b = bootApp(row);
    double cpuBefore = selfCpuSeconds();
    auto started = Clock::now();
    auto r = b->app->runtime().start("research", json::value("Read every page."), {.id = kId});
    double wall = millisSince(started) / 1000.0;
    double cpu = selfCpuSeconds() - cpuBefore;  // Loom's own: tool processes are not in it
    expectParked(r, "the run");
    struct rusage self {};
    ::getrusage(RUSAGE_SELF, &self);
    int64_t blobBytes = 0;
    b->app->contentStore()->forEachBlob(
        [&](const content::BlobInfo& blob) { blobBytes += blob.size; });
    return json::object{{"wall", wall},
                        {"cpu", cpu},
                        {"peakRss", peakRss(self)},
                        {"logBytes", b->app->store().info(kId)->logBytes},
                        {"blobBytes", blobBytes}};
  });
  out.blobBytes = ran.report.at("blobBytes").as_int64();
  out.homeBytes = diskBytes(row.home);
  out.runCpuSeconds = ran.report.at("cpu").to_number<double>();
  out.runWallSeconds = ran.report.at("wall").to_number<double>();
  out.runPeakRssBytes = ran.report.at("peakRss").as_int64();
  out.logBytes = ran.report.at("logBytes").as_int64();
  ChildOutcome resumed = inChild([&] {
    auto booting = Clock::now();
    auto b = bootApp(row);
    double boot = millisSince(booting);
    auto started = Clock::now();
    auto r = b->app->runtime().resume(kId);
    double resume = millisSince(started);
    expectParked(r, "the resume");
    return json::object{{"boot", boot}, {"resume", resume}};
  });
  out.resumeBootMillis = resumed.report.at("boot").to_number<double>();
  out.resumeMillis = resumed.report.at("resume").to_number<double>();
  measureState(o.loomBinary.empty() ? fs::read_symlink("/proc/self/exe").string() : o.loomBinary,
               row, out);
  fs::remove_all(row.home);
  return out;
}

double mb(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

}  // namespace

std::vector<LongRunBenchRow> runLongRunBench(const LongRunBenchOptions& o) {
  std::vector<LongRunBenchRow> rows;
  fs::path base = fs::temp_directory_path() / ("loom-bench-long-" + std::to_string(::getpid()));
  for (int64_t turns : o.turns) {
    for (const auto& tool : o.tools) {
      for (const auto& cc : o.claimChecks) {
        for (const auto& snapshots : o.snapshots) {
          rows.push_back(runRow(o, Row{turns, tool, cc, snapshots, base / "home", o.seed}));
        }
      }
    }
  }
  fs::remove_all(base);
  return rows;
}

std::string formatLongRunTable(const std::vector<LongRunBenchRow>& rows) {
  std::string out =
      "| turns | tool | claim-check | snapshots | CPU ms/turn | wall ms/turn | peak RSS MB | log "
      "MB "
      "| blob MB | home disk MB | resume ms (boot) | state ms | state peak RSS MB |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    double n = static_cast<double>(r.turns);
    out += "| " + std::to_string(r.turns) + " | " + r.tool + " | " + r.claimCheck + " | " +
           r.snapshots + " | " + fixedDecimals(r.runCpuSeconds * 1000 / n, 3) + " | " +
           fixedDecimals(r.runWallSeconds * 1000 / n, 3) + " | " +
           fixedDecimals(mb(r.runPeakRssBytes), 1) + " | " + fixedDecimals(mb(r.logBytes), 2) +
           " | " + fixedDecimals(mb(r.blobBytes), 2) + " | " + fixedDecimals(mb(r.homeBytes), 2) +
           " | " + fixedDecimals(r.resumeMillis, 1) + " (" + fixedDecimals(r.resumeBootMillis, 1) +
           ") | " + fixedDecimals(r.stateMillis, 1) + " | " +
           fixedDecimals(mb(r.statePeakRssBytes), 1) + " |\n";
  }
  return out;
}

json::value toJson(const std::vector<LongRunBenchRow>& rows) {
  json::array out;
  for (const auto& r : rows) {
    out.push_back(json::object{{"turns", r.turns},
                               {"tool", r.tool},
                               {"claimCheck", r.claimCheck},
                               {"snapshots", r.snapshots},
                               {"runCpuSeconds", r.runCpuSeconds},
                               {"runWallSeconds", r.runWallSeconds},
                               {"runPeakRssBytes", r.runPeakRssBytes},
                               {"logBytes", r.logBytes},
                               {"blobBytes", r.blobBytes},
                               {"homeBytes", r.homeBytes},
                               {"resumeMillis", r.resumeMillis},
                               {"resumeBootMillis", r.resumeBootMillis},
                               {"stateMillis", r.stateMillis},
                               {"statePeakRssBytes", r.statePeakRssBytes}});
  }
  return out;
}

}  // namespace loom::long_run_bench
