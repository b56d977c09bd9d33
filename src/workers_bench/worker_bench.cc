#include "workers_bench/worker_bench.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "app/storage_location.h"
#include "loom/agent_app/agent_app.h"
#include "loom/app/app.h"
#include "loom/util/error.h"

extern char** environ;

namespace loom::worker_bench {
namespace {

using Steady = std::chrono::steady_clock;

void writeFile(const std::filesystem::path& path, const std::string& text, bool executable) {
  std::ofstream(path) << text;
  if (executable) std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

// The bench's agent app in `dir`: `toolCalls` turns calling the subprocess tool `echo`, then
// one that answers (a turn without a tool call ends an agent's run).
std::filesystem::path writeApp(const std::filesystem::path& dir, int64_t latencyMillis,
                               int toolCalls) {
  writeFile(dir / "echo.sh", "#!/bin/sh\ncat >/dev/null\necho '{\"ok\": true}'\n", true);
  std::string turns;
  for (int t = 0; t < toolCalls; ++t) {
    turns += R"({"toolCalls": [{"name": "echo", "arguments": {}}]}, )";
  }
  writeFile(dir / "script.json",
            "{\"latencyMs\": " + std::to_string(latencyMillis) + ", \"turns\": [" + turns +
                R"({"answer": "done"}]})",
            false);
  writeFile(dir / "app.toml",
            "[agent]\nname = \"bench\"\nprompt = \"go\"\n[model]\nkind = \"scripted\"\n"
            "script = \"script.json\"\n[[tools]]\nname = \"echo\"\ndescription = \"echo\"\n"
            "command = [\"./echo.sh\"]\n",
            false);
  return dir / "app.toml";
}

// A /proc file's text; empty when the process is gone.
std::string readProcFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// The CPU milliseconds one call of the bench's tool costs here (a shell and cat started and
// waited for): the floor of the tools' work, measured, not assumed.
double toolCallCpuMillis(const std::filesystem::path& dir) {
  constexpr int kCalls = 20;
  rusage before{};
  ::getrusage(RUSAGE_CHILDREN, &before);
  std::string tool = (dir / "echo.sh").string();
  for (int i = 0; i < kCalls; ++i) {
    char* argv[] = {tool.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    if (::posix_spawn(&pid, tool.c_str(), &actions, nullptr, argv, environ) == 0) {
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
    posix_spawn_file_actions_destroy(&actions);
  }
  rusage after{};
  ::getrusage(RUSAGE_CHILDREN, &after);
  auto millis = [](const rusage& u) {
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
  };
  return (millis(after) - millis(before)) / kCalls;
}

// The resident bytes of process `root` and every descendant (/proc).
int64_t treeRss(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::map<pid_t, int64_t> rss;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  while (dirent* e = ::readdir(proc)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string text = readProcFile("/proc/" + std::string(e->d_name) + "/stat");
    auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(text.substr(close + 2));
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    if (f.size() < 22) continue;
    children[static_cast<pid_t>(std::stol(f[1]))].push_back(pid);  // field 4: ppid
    rss[pid] = std::stoll(f[21]) * ::sysconf(_SC_PAGESIZE);       // field 24: rss pages
  }
  ::closedir(proc);
  int64_t total = 0;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    total += rss[p];
    for (pid_t c : children[p]) todo.push_back(c);
  }
  return total;
}

pid_t spawnWorker(const WorkerBenchOptions& options, const std::vector<std::string>& args,
                  const std::vector<std::string>& extraEnv, const std::filesystem::path& log) {
  std::vector<std::string> argv{options.program};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env(extraEnv);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    // The row's store is the one `extraEnv` names: none inherited from this process.
    if (std::string_view(*e).starts_with("LOOM_DATABASE_")) continue;
    envp.push_back(*e);
  }
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, cargv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw UnavailableError(argv[0] + ": " + std::strerror(rc));
  return pid;
}

int64_t countEnded(kernel::EventStore& store) {
  int64_t ended = 0;
  for (auto status : {kernel::ExecutionStatus::kCompleted, kernel::ExecutionStatus::kFailed}) {
    kernel::ExecutionFilter filter;
    filter.status = status;
    kernel::forEachExecution(store, filter, [&](const kernel::ExecutionInfo&) { ++ended; });
  }
  return ended;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

struct Home {
  std::filesystem::path dir;
  std::vector<std::string> env;  // the worker's: the database, when on PostgreSQL
};

// Submits `runs` agent runs of the app at `appFile` in this process (durability normal: the
// submissions are not what is measured).
void submitAgents(const std::filesystem::path& appFile, const app::StorageLocation& where,
                  int64_t runs) {
  agent_app::AgentApp app = agent_app::loadAgentApp(appFile);
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  agent_app::registerAgentApp(app, workflows, tasks);
  app::Config config = *app.config;
  config.storage.home = where.home.string();
  config.storage.url = where.url;
  config.storage.schema = where.schema;
  config.storage.eventStore.durability = "normal";
  auto booted = app::boot(app::defineConfig(std::move(config)), workflows, tasks);
  for (int64_t i = 0; i < runs; ++i) {
    booted->runtime().submit("bench", agent_app::agentAppInput(app, json::value("go")),
                             {"b" + std::to_string(i)});
  }
}

// Submits `runs` runs of example.steps (3 steps of `turnLatencyMillis` each) with `loom run
// --submit`, up to 8 at once (the stock binary registers the workflow).
void submitSteps(const WorkerBenchOptions& options, const std::string& home,
                 const std::vector<std::string>& env, int64_t runs) {
  std::string input = "{\"steps\": 3, \"sleepMs\": " +
                      std::to_string(options.turnLatencyMillis) + "}";
  std::vector<pid_t> batch;
  auto drain = [&] {
    for (pid_t pid : batch) {
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
    batch.clear();
  };
  for (int64_t i = 0; i < runs; ++i) {
    batch.push_back(spawnWorker(options,
                                {"--home", home, "--durability", "normal", "run", "example.steps",
                                 "--id", "b" + std::to_string(i), "--submit", "--input", input},
                                env, "/dev/null"));
    if (i == 0 || batch.size() == 8) drain();  // the first alone: it makes the home
  }
  drain();
}

Home makeHome(const WorkerBenchOptions& options, const std::string& store, int row) {
  std::string pattern = (std::filesystem::temp_directory_path() / "loom-bench-workers-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) throw UnavailableError("mkdtemp: cannot make a home");
  Home home{pattern, {}};
  if (store == "postgres") {
    home.env = {"LOOM_DATABASE_URL=" + options.databaseUrl,
                "LOOM_DATABASE_SCHEMA=bench_workers_" + std::to_string(::getpid()) + "_" +
                    std::to_string(row)};
  }
  return home;
}

WorkerBenchRow measure(const WorkerBenchOptions& options, const std::string& store,
                       const std::string& isolation, int64_t runs, int row) {
  WorkerBenchRow r{store, isolation, runs};
  const bool steps = options.workload == "steps";
  r.idealMillis = static_cast<double>((steps ? 3 : options.toolCalls + 1) *
                                      options.turnLatencyMillis);
  Home home = makeHome(options, store, row);
  std::filesystem::path appFile = writeApp(home.dir, options.turnLatencyMillis, options.toolCalls);
  // The floor: the model's turns one after another, or the tools' CPU spread over the cores.
  double cores = std::max(1u, std::thread::hardware_concurrency());
  r.toolFloorMillis = steps || options.toolCalls == 0
                          ? 0
                          : static_cast<double>(runs) * options.toolCalls *
                                toolCallCpuMillis(home.dir) / cores;
  std::string homeArg = (home.dir / "home").string();
  if (store == "postgres") {
    pid_t m = spawnWorker(options, {"--home", homeArg, "db", "migrate"}, home.env,
                          home.dir / "migrate.log");
    int status = 0;
    ::waitpid(m, &status, 0);
  }
  app::StorageLocation where{.home = homeArg};
  if (store == "postgres") {
    where.url = options.databaseUrl;
    where.schema = home.env[1].substr(home.env[1].find('=') + 1);
  }
  // All runnable before the worker starts.
  if (steps) {
    submitSteps(options, homeArg, home.env, runs);
  } else {
    submitAgents(appFile, where, runs);
  }
  std::unique_ptr<kernel::EventStore> results = app::openEventStore(where);
  const int64_t startMillis = systemClock()->nowMillis();
  auto start = Steady::now();
  pid_t worker = spawnWorker(options,
                             {"--home", homeArg, "worker", "--concurrency", std::to_string(runs),
                              "--isolation", isolation},
                             home.env, home.dir / "worker.log");
  std::atomic<bool> sampling{true};
  std::atomic<int64_t> peak{0};
  std::thread sampler([&] {
    while (sampling.load()) {
      peak.store(std::max(peak.load(), treeRss(worker)));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  auto deadline = start + std::chrono::seconds(600);
  while ((r.completed = countEnded(*results)) < runs && Steady::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.wallMillis = std::chrono::duration<double, std::milli>(Steady::now() - start).count();
  sampling.store(false);
  sampler.join();
  r.peakRssBytes = peak.load();
  ::kill(worker, SIGTERM);
  int status = 0;
  rusage usage{};
  ::wait4(worker, &status, 0, &usage);
  double cpuMicros = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  rusage children{};
  ::getrusage(RUSAGE_CHILDREN, &children);  // the process children's, folded in by wait4
  std::vector<double> firstStep;
  for (int64_t i = 0; i < runs; ++i) {
    std::optional<int64_t> firstEnd;
    results->scan("b" + std::to_string(i), 2, [&](const kernel::Event& e) {
      if (!firstEnd) firstEnd = e.atMillis;
    });
    // The first step is the first model turn: it started its latency before it was journaled.
    if (firstEnd) {
      firstStep.push_back(
          static_cast<double>(*firstEnd - startMillis - options.turnLatencyMillis));
    }
    if (auto info = results->info("b" + std::to_string(i))) r.steps += info->steps;
  }
  r.firstStepP50Millis = percentile(firstStep, 0.5);
  r.firstStepP99Millis = percentile(firstStep, 0.99);
  r.cpuMicrosPerStep = r.steps > 0 ? cpuMicros / static_cast<double>(r.steps) : 0;
  results.reset();
  std::error_code ignored;
  if (store == "sqlite") std::filesystem::remove_all(home.dir, ignored);
  return r;
}

}  // namespace

std::vector<WorkerBenchRow> runWorkerBench(const WorkerBenchOptions& options) {
  std::vector<WorkerBenchRow> rows;
  int row = 0;
  for (const auto& store : options.stores) {
    for (int64_t runs : options.runs) {
      for (const auto& isolation : options.isolations) {
        if (store == "postgres" && options.databaseUrl.empty()) {
          rows.push_back({store, isolation, runs, "no LOOM_DATABASE_URL"});
          continue;
        }
        if (isolation == "process" && runs > options.maxProcessRuns) {
          rows.push_back({store, isolation, runs,
                          "over --max-process-runs (about 17 MB per run)"});
          continue;
        }
        if (options.progress) {
          options.progress(store + ", " + isolation + ", " + std::to_string(runs) + " runs");
        }
        rows.push_back(measure(options, store, isolation, runs, row++));
      }
    }
  }
  return rows;
}

json::value toJson(const std::vector<WorkerBenchRow>& rows) {
  json::array out;
  for (const auto& r : rows) {
    json::object o{{"store", r.store}, {"isolation", r.isolation}, {"runs", r.runs}};
    if (!r.skipped.empty()) {
      o["skipped"] = r.skipped;
    } else {
      o["completed"] = r.completed;
      o["wallMs"] = r.wallMillis;
      o["idealMs"] = r.idealMillis;
      o["toolFloorMs"] = r.toolFloorMillis;
      o["wallOverIdeal"] = r.wallMillis / std::max(r.idealMillis, r.toolFloorMillis);
      o["peakRssBytes"] = r.peakRssBytes;
      o["rssPerRunBytes"] = r.peakRssBytes / std::max<int64_t>(1, r.runs);
      o["firstStepP50Ms"] = r.firstStepP50Millis;
      o["firstStepP99Ms"] = r.firstStepP99Millis;
      o["cpuMicrosPerStep"] = r.cpuMicrosPerStep;
      o["steps"] = r.steps;
    }
    out.push_back(std::move(o));
  }
  return out;
}

std::string formatWorkerBenchTable(const std::vector<WorkerBenchRow>& rows) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-9s %-8s %6s %6s %9s %9s %6s %9s %9s %8s %8s %9s\n",
                "store", "isolate", "runs", "done", "wall ms", "floor ms", "x floor", "peak MB", "KB/run",
                "start p50", "p99", "cpu us/st");
  out << line;
  for (const auto& r : rows) {
    if (!r.skipped.empty()) {
      std::snprintf(line, sizeof line, "%-9s %-8s %6lld   skipped: %s\n", r.store.c_str(),
                    r.isolation.c_str(), static_cast<long long>(r.runs), r.skipped.c_str());
      out << line;
      continue;
    }
    std::snprintf(line, sizeof line,
                  "%-9s %-8s %6lld %6lld %9.0f %9.0f %6.2f %9.1f %9.0f %8.1f %8.1f %9.0f\n",
                  r.store.c_str(), r.isolation.c_str(), static_cast<long long>(r.runs),
                  static_cast<long long>(r.completed), r.wallMillis,
                  std::max(r.idealMillis, r.toolFloorMillis),
                  r.wallMillis / std::max(r.idealMillis, r.toolFloorMillis),
                  static_cast<double>(r.peakRssBytes) / 1e6,
                  static_cast<double>(r.peakRssBytes) / 1e3 / static_cast<double>(r.runs),
                  r.firstStepP50Millis, r.firstStepP99Millis, r.cpuMicrosPerStep);
    out << line;
  }
  return out.str();
}

}  // namespace loom::worker_bench
