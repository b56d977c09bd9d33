// The routes of `loom serve` (docs/spec/http-api.md): reads over the host::HomeSession's stores, one at a
// time; operations as `loom` child processes.
#include "inspect/inspector_server.h"

#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "inspect/stops.h"
#include "util/this_program.h"
#include "compliance/erase_journal.h"
#include "inspect/run_state.h"
#include "inspect/run_status.h"
#include "loom/agent/approval.h"
#include "loom/kernel/event_store.h"

#include "inspect/http_errors.h"
#include "util/sqlite_db.h"
#include "inspect/inspector_page.h"

extern char** environ;

namespace loom::inspect {
namespace {

using Request = httplib::Request;
using Response = httplib::Response;

constexpr auto kOperationWait = std::chrono::seconds(2);
constexpr std::size_t kMaxChildOutput = 1 << 20;
constexpr std::size_t kMaxTallies = 10'000;

// Thrown by a scan's visitor to stop it at a page's end.
struct PageFull {};

void reply(Response& res, int status, const json::value& body) {
  res.status = status;
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_content(json::toText(body), "application/json; charset=utf-8");
}

void replyError(Response& res, int status, std::string_view code, const std::string& message) {
  reply(res, status, json::object{{"error", json::object{{"code", code}, {"message", message}}}});
}

// A handler's errors as the API's error objects: a sealed event is `sealed`, every other
// loom::Error its code.
template <typename Fn>
httplib::Server::Handler guarded(Fn fn) {
  return [fn](const Request& req, Response& res) {
    try {
      fn(req, res);
    } catch (const kernel::SealedEventError& e) {
      replyError(res, 403, "sealed", e.what());
    } catch (const Error& e) {
      std::string_view code = errorCodeName(e.code());
      replyError(res, httpStatusOf(code), code, e.what());
    } catch (const std::exception& e) {
      replyError(res, 500, "internal",
                 std::string("internal error: ") + e.what() + "; this is a bug in Loom");
    }
  };
}

int64_t intParam(const Request& req, const std::string& name, int64_t fallback, int64_t min,
                 int64_t max) {
  if (!req.has_param(name.c_str())) return fallback;
  std::string text = req.get_param_value(name.c_str());
  try {
    std::size_t used = 0;
    int64_t v = std::stoll(text, &used);
    if (used == text.size() && v >= min && v <= max) return v;
  } catch (const std::exception&) {
    // reported below
  }
  throw InvalidArgumentError("parameter '" + name + "' must be an integer from " +
                             std::to_string(min) + " to " + std::to_string(max) + ", not '" +
                             text + "'");
}

std::optional<std::string> textParam(const Request& req, const std::string& name) {
  if (!req.has_param(name.c_str())) return std::nullopt;
  return req.get_param_value(name.c_str());
}

json::value bodyJson(const Request& req) {
  if (req.body.empty()) return json::object{};
  return json::parse(req.body, "the request body");
}

json::object bodyObject(const Request& req) {
  json::value v = bodyJson(req);
  if (!v.is_object()) throw InvalidArgumentError("the request body must be a JSON object");
  return std::move(v.as_object());
}

std::string stringMember(const json::object& o, std::string_view key, std::string fallback) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_string()) throw InvalidArgumentError("'" + std::string(key) + "' must be a string");
  return std::string(v->as_string());
}

kernel::ExecutionInfo requireInfo(const kernel::EventStore& store, const std::string& id) {
  auto info = store.info(id);
  if (!info) throw NotFoundError("no execution '" + id + "' in this server's store");
  return *info;
}

// The store-level status a derived `loom ls` status narrows (orphaned and submitted runs are
// running; retrying ones parked).
std::optional<kernel::ExecutionStatus> baseStatus(const std::string& status) {
  if (status == "orphaned" || status == "submitted") return kernel::ExecutionStatus::kRunning;
  if (status == "retrying") return kernel::ExecutionStatus::kParked;
  auto s = kernel::statusFromName(status);
  if (!s) {
    throw InvalidArgumentError("parameter 'status' must be one of running, orphaned, submitted, "
                               "parked, retrying, completed, failed, cancelled; not '" +
                               status + "'");
  }
  return s;
}

void waitAndForget(pid_t pid) {
  std::thread([pid] {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }).detach();
}

}  // namespace

InspectorRoutes::InspectorRoutes(host::HomeSession& session, ServeOptions options)
    : session_(session), options_(std::move(options)), program_(thisProgram("loom serve")) {
  app::StorageLocation where = session.location();
  globalArgs_ = {"--home", std::filesystem::absolute(where.home).string(), "--durability",
                 session.options().durability};
  childEnv_.push_back(std::string(kErrorCodeLineEnv) + "=1");
  if (!session.configFile().empty()) configArgs_ = {"--config", session.configFile()};
  if (where.onPostgres()) {
    childEnv_.push_back("LOOM_DATABASE_URL=" + where.url);
    childEnv_.push_back("LOOM_DATABASE_SCHEMA=" + where.schema);
  }
}

OperationResult InspectorRoutes::runOperation(const std::vector<std::string>& args) const {
  for (const auto& a : args) {
    // exec would cut the argument there: an operation on another run than the one named
    if (a.find('\0') != std::string::npos) throw InvalidArgumentError("an argument holds a NUL byte");
  }
  UniqueFd out = scratchFile("loom serve");
  UniqueFd err = scratchFile("loom serve");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err.get(), 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // no client socket reaches a child
  // A session of its own (the run it resumes goes on when the server stops), with the signals
  // the server blocks for itself (SIGINT, SIGTERM, SIGPIPE) delivered again as by default.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> argv{program_};
  argv.insert(argv.end(), globalArgs_.begin(), globalArgs_.end());
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env(childEnv_);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, program_.c_str(), &actions, &attr, cargv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == E2BIG) throw InvalidArgumentError("the request's arguments are too long for a command line");
  if (rc != 0) throw UnavailableError("loom serve: cannot start " + program_ + ": " + strerror(rc));
  OperationResult result{.pid = pid};
  auto until = std::chrono::steady_clock::now() + kOperationWait;
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() >= until) {
      waitAndForget(pid);
      return result;  // still running: the run goes on in the child
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  result.finished = true;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = readBack(out.get(), kMaxChildOutput);
  result.err = readBack(err.get(), kMaxChildOutput);
  auto line = result.err.rfind(kErrorCodePrefix);
  if (line != std::string::npos) {
    result.errorCode = result.err.substr(line + kErrorCodePrefix.size());
    result.err.resize(line > 0 ? line - 1 : 0);
  }
  return result;
}

namespace {

// The answer of an operation: its JSON output, its error, or 202 while it runs on.
void replyOperation(Response& res, const OperationResult& op) {
  if (!op.finished) {
    reply(res, 202, json::object{{"accepted", true}, {"pid", op.pid}});
    return;
  }
  if (op.exitCode == 0) {
    json::value body = json::object{{"ok", true}};
    if (!op.out.empty()) {
      try {
        body = json::parse(op.out, "the command's output");
      } catch (const Error&) {
        body = json::object{{"ok", true}, {"output", op.out}};
      }
    }
    reply(res, 200, body);
    return;
  }
  std::string message = op.err.rfind("loom: ", 0) == 0 ? op.err.substr(6) : op.err;
  std::string code = !op.errorCode.empty() ? op.errorCode
                     : op.exitCode == cli::kExitUsage ? std::string("invalidArgument")
                                                 : std::string("internal");
  // Every operation runs with --json: its error is the one value {"error": {"code", "message"}}
  // on stdout, and a run that ended failed prints its result (answered 200 below).
  json::value out;
  try {
    out = json::parse(op.out, "the command's output");
  } catch (const InvalidArgumentError&) {
    // not JSON (nothing printed): `out` stays null and the stderr line stands
  }
  const auto* top = out.if_object();
  if (top != nullptr && top->contains("status") && top->contains("id")) {
    // The command did its part (a signal recorded) and printed the run's outcome: a run that
    // then failed is that run's news, not a failed request.
    reply(res, 200, out);
    return;
  }
  const auto* error = top != nullptr && top->size() == 1 ? top->if_contains("error") : nullptr;
  const auto* fields = error != nullptr ? error->if_object() : nullptr;
  if (fields != nullptr && fields->contains("code") && fields->at("code").is_string() &&
      fields->contains("message") && fields->at("message").is_string()) {
    code = std::string(fields->at("code").get_string());
    message = std::string(fields->at("message").get_string());
  }
  if (message.empty()) message = "the command failed with exit code " + std::to_string(op.exitCode);
  replyError(res, httpStatusOf(code), code, message);
}

}  // namespace

void InspectorRoutes::install(httplib::Server& server) {
  RouteInstaller routes(server);
  routes.get("/", guarded([](const Request&, Response& res) {
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                   "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    res.set_header("X-Frame-Options", "DENY");
    res.set_content(std::string(kInspectorPage), "text/html; charset=utf-8");
  }));
  routes.get("/api/v1/server", guarded([this](const Request&, Response& res) {
    std::lock_guard lock(mu_);
    reply(res, 200, json::object{{"version", LOOM_VERSION},
                                 {"readOnly", options_.readOnly},
                                 {"store", session_.location().describe()}});
  }));
  routes.get("/api/v1/executions", guarded([this](const Request& req, Response& res) {
    auto limit = static_cast<std::size_t>(intParam(req, "limit", 100, 1, 1000));
    auto status = textParam(req, "status");
    kernel::ExecutionFilter filter;
    filter.workflow = textParam(req, "workflow");
    filter.subject = textParam(req, "subject");
    filter.afterId = textParam(req, "after").value_or("");
    if (status) filter.status = baseStatus(*status);
    std::lock_guard lock(mu_);
    kernel::EventStore& store = session_.store(false);
    auto shreds = compliance::detail::shredTimes(store);
    json::array page;
    json::value next = nullptr;
    try {
      kernel::forEachExecution(store, filter, [&](const kernel::ExecutionInfo& info) {
        RunStatus run = runStatusOf(store, info, shreds);
        if (status && run.status() != *status) return;
        if (page.size() == limit) {
          next = page.back().as_object().at("id");
          throw PageFull{};
        }
        page.push_back(toJson(run));
      });
    } catch (const PageFull&) {
      // a page's worth: `next` says where the following one starts
    }
    reply(res, 200, json::object{{"executions", std::move(page)}, {"next", next}});
  }));
  // A read of one run: its id from the path, under the read lock, the run required to exist;
  // `answer(req, store, info)` is the 200 body.
  auto runRead = [this](auto answer) {
    return guarded([this, answer](const Request& req, Response& res) {
      std::string id = req.matches[1];
      std::lock_guard lock(mu_);
      kernel::EventStore& store = session_.store(false);
      kernel::ExecutionInfo info = requireInfo(store, id);
      reply(res, 200, answer(req, store, info));
    });
  };
  routes.get(R"(/api/v1/executions/(.+)/events)",
             runRead([](const Request& req, kernel::EventStore& store,
                        const kernel::ExecutionInfo& info) {
               int64_t from = intParam(req, "from", 1, 1, INT64_MAX);
               auto limit = static_cast<std::size_t>(intParam(req, "limit", 200, 1, 1000));
               json::array events;
               json::value next = nullptr;
               try {
                 store.scan(info.id, from, [&](const kernel::Event& e) {
                   if (events.size() == limit) {
                     next = e.seq;
                     throw PageFull{};
                   }
                   events.push_back(kernel::toJson(e));
                 });
               } catch (const PageFull&) {
                 // a page's worth
               }
               return json::value(json::object{{"events", std::move(events)}, {"next", next}});
             }));
  routes.get(R"(/api/v1/executions/(.+)/state)",
             runRead([](const Request&, kernel::EventStore& store,
                        const kernel::ExecutionInfo& info) {
               return toJson(foldRun(store, info.id, false), info.id);
             }));
  routes.get(R"(/api/v1/executions/(.+)/timeline)",
             runRead([](const Request& req, kernel::EventStore& store,
                        const kernel::ExecutionInfo& info) {
               int64_t from = intParam(req, "from", 1, 1, INT64_MAX);
               auto limit = static_cast<std::size_t>(intParam(req, "limit", 50, 1, 500));
               TimelinePage page = timelinePage(store, info.id, from, limit);
               json::value next = page.next ? json::value(*page.next) : json::value(nullptr);
               return json::value(
                   json::object{{"items", std::move(page.items)}, {"next", next}});
             }));
  routes.get(R"(/api/v1/executions/(.+)/sizes)",
             runRead([this](const Request& req, kernel::EventStore& store,
                            const kernel::ExecutionInfo& info) {
               auto points = static_cast<std::size_t>(intParam(req, "points", 200, 1, 2000));
               if (sizes_.size() > kMaxTallies) sizes_.clear();  // a cache
               SizeSeries& cached = sizes_[info.id];
               if (cached.startedAtMillis != info.startedAtMillis ||
                   cached.nextSeq != info.nextSeq || cached.points != points) {
                 cached = SizeSeries{info.startedAtMillis, info.nextSeq, points,
                                     sizeSeries(store, info.id, points)};
               }
               return json::value(json::object{{"points", cached.series}});
             }));
  routes.get(R"(/api/v1/executions/(.+)/blobs/([^/]+))",
             guarded([this](const Request& req, Response& res) { readBlob(req, res); }));
  // After the routes below one run (an id may hold '/': `(.+)` is greedy, and a path ending
  // in /events, /state, ... matched those first).
  routes.get(R"(/api/v1/executions/(.+))", guarded([this](const Request& req, Response& res) {
    std::string id = req.matches[1];
    std::lock_guard lock(mu_);
    kernel::EventStore& store = session_.store(false);
    kernel::ExecutionInfo info = requireInfo(store, id);
    RunStatus run =
        runStatusOf(store, info, compliance::detail::shredTimes(store));
    json::object o = toJson(run);
    json::array approvals;
    if (!run.erased) {
      try {
        if (auto a = pendingApproval(store, info)) approvals.push_back(std::move(*a));
        if (usage_.size() > kMaxTallies) usage_.clear();  // a cache: tallied again on demand
        UsageTally& tally = usage_[id];
        if (tally.startedAtMillis != info.startedAtMillis || tally.nextSeq > info.nextSeq) {
          tally = UsageTally{.startedAtMillis = info.startedAtMillis};  // a new run
        }
        store.scan(id, tally.nextSeq, [&tally](const kernel::Event& e) { tally.apply(e); });
        json::object usage = tally.toJson();
        if (info.usage.modelTurns > 0) {  // what the steps recorded (metadata): their cost
          usage["cachedInputTokens"] = info.usage.cachedInputTokens;
          usage["costUsd"] = kernel::usdOf(info.usage.costNanoUsd);
        }
        o["usage"] = std::move(usage);
      } catch (const kernel::SealedEventError& e) {
        // Its metadata is clear, its events are not: the page says what the server needs.
        o["sealed"] = json::object{
            {"subject", e.subject()},
            {"advice", "This run is sealed under subject '" + e.subject() +
                           "' and this server has no keys to open it. Restart `loom serve` "
                           "with the master key the home records in its environment (for "
                           "example LOOM_MASTER_KEY), or with --config naming a file whose "
                           "[security.keys] gives it."}};
      }
    }
    o["pendingApprovals"] = std::move(approvals);
    reply(res, 200, o);
  }));
  routes.get("/api/v1/approvals", guarded([this](const Request&, Response& res) {
    std::lock_guard lock(mu_);
    kernel::EventStore& store = session_.store(false);
    json::array approvals;
    kernel::ExecutionFilter parked;
    parked.status = kernel::ExecutionStatus::kParked;
    kernel::forEachExecution(store, parked, [&](const kernel::ExecutionInfo& info) {
      try {
        if (auto a = pendingApproval(store, info)) approvals.push_back(std::move(*a));
      } catch (const kernel::SealedEventError&) {
        // Its park cannot be read without keys: listed as sealed, never left out.
        approvals.push_back(json::object{
            {"execution", info.id},
            {"workflow", info.workflow},
            {"subject", info.subject ? json::value(*info.subject) : json::value(nullptr)},
            {"sealed", true}});
      }
    });
    reply(res, 200, json::object{{"approvals", std::move(approvals)}});
  }));
  routes.get("/api/v1/killed", guarded([this](const Request&, Response& res) {
    std::lock_guard lock(mu_);
    reply(res, 200, stopsJson(session_.killSwitch().list(), std::nullopt));
  }));
  routes.get("/api/v1/content", guarded([this](const Request&, Response& res) {
    std::lock_guard lock(mu_);
    int64_t blobs = 0;
    int64_t bytes = 0;
    session_.app(false).contentStore()->forEachBlob([&](const content::BlobInfo& blob) {
      ++blobs;
      bytes += blob.size;
    });
    reply(res, 200, json::object{{"blobs", blobs}, {"bytes", bytes}});
  }));
  installOperations(routes);
  routes.finish();
}

void InspectorRoutes::recoverAfterFailedFlush() {
  if (!sqlite::anyFlushFailed()) return;
  std::lock_guard lock(mu_);
  if (sqlite::anyFlushFailed()) session_.closeStores();
}

void InspectorRoutes::readBlob(const Request& req, Response& res) {
  std::string id = req.matches[1];
  std::string address = req.matches[2];
  if (!content::isValidAddress(address)) {
    throw InvalidArgumentError("'" + address + "' is not a content address");
  }
  std::lock_guard lock(mu_);
  kernel::EventStore& store = session_.store(false);
  kernel::ExecutionInfo info = requireInfo(store, id);
  if (!citesBlob(store, id, address)) {
    throw NotFoundError("execution '" + id + "' cites no offloaded result at " + address);
  }
  kernel::appendControlAtEnd(
      store, kernel::ControlEvent{.type = "BLOB_READ",
                                  .atMillis = systemClock()->nowMillis(),
                                  .data = json::object{{"execution", id},
                                                       {"address", address},
                                                       {"by", "loom serve"},
                                                       {"peer", req.remote_addr}}});
  auto bytes = session_.app(false).contentStore()->get(address, info.subject);
  if (!bytes) {
    throw NotFoundError("the blob " + address + " of execution '" + id +
                        "' is not in the content store any more (the sweep reclaimed it, or "
                        "its subject was erased)");
  }
  json::value value;
  try {
    value = json::parse(*bytes, "blob " + address);
  } catch (const InvalidArgumentError& e) {
    throw DataLossError(std::string(e.what()) + ": the stored result is not the JSON Loom wrote");
  }
  reply(res, 200, json::object{{"address", address},
                               {"size", static_cast<int64_t>(bytes->size())},
                               {"value", std::move(value)}});
}

void InspectorRoutes::installOperations(RouteInstaller& routes) {
  auto operation = [this](auto argsOf) {
    return guarded([this, argsOf](const Request& req, Response& res) {
      replyOperation(res, runOperation(argsOf(req)));
    });
  };
  routes.post(R"(/api/v1/executions/(.+)/approvals/([^/]+))",
              operation([](const Request& req) {
                json::object body = bodyObject(req);
                agent::readApprovalDecision(body);  // the shape `loom signal` takes, or 400
                return std::vector<std::string>{"signal", "--json", "--", req.matches[1],
                                                "approve:" + std::string(req.matches[2]),
                                                json::toText(body)};
              }));
  routes.post(R"(/api/v1/executions/(.+)/signals/([^/]+))", operation([](const Request& req) {
                return std::vector<std::string>{"signal", "--json", "--", req.matches[1],
                                                req.matches[2], json::toText(bodyJson(req))};
              }));
  routes.post(R"(/api/v1/executions/(.+)/cancel)", operation([](const Request& req) {
                std::string reason =
                    stringMember(bodyObject(req), "reason", "cancelled in the inspector");
                return std::vector<std::string>{"cancel", "--json", "--reason=" + reason, "--",
                                                req.matches[1]};
              }));
  routes.post(R"(/api/v1/executions/(.+)/retry)", operation([](const Request& req) {
                return std::vector<std::string>{"retry", "--json", "--", req.matches[1]};
              }));
  // {"at": step id or seq, "input"?: any, "id"?: the fork's id}
  routes.post(R"(/api/v1/executions/(.+)/fork)", operation([](const Request& req) {
                json::object body = bodyObject(req);
                const auto* at = body.if_contains("at");
                std::string point = at != nullptr && at->is_int64() ? std::to_string(at->as_int64())
                                                                    : stringMember(body, "at", "");
                if (point.empty()) {
                  throw InvalidArgumentError(
                      "the body must name where the fork starts: {\"at\": a step id or a seq}");
                }
                std::vector<std::string> args{"fork", "--json", "--at=" + point};
                if (const auto* input = body.if_contains("input")) {
                  args.push_back("--input=" + json::toText(*input));
                }
                std::string id = stringMember(body, "id", "");
                if (!id.empty()) args.push_back("--id=" + id);
                args.insert(args.end(), {"--", req.matches[1]});
                return args;
              }));
  routes.post(R"(/api/v1/executions/(.+)/rerun)", operation([](const Request& req) {
                std::vector<std::string> args{"rerun", "--json"};
                std::string id = stringMember(bodyObject(req), "id", "");
                if (!id.empty()) args.push_back("--id=" + id);
                args.insert(args.end(), {"--", req.matches[1]});
                return args;
              }));
  auto effectArgs = [this](std::string command) {
    return [this, command](const Request& req) {
      json::object body = bodyObject(req);
      std::vector<std::string> args{command, "--json"};
      args.insert(args.end(), configArgs_.begin(), configArgs_.end());
      const auto* all = body.if_contains("all");
      if (all != nullptr && all->is_bool() && all->as_bool()) {
        args.push_back("--all");
        return args;
      }
      std::string effect = stringMember(body, "effect", "");
      if (effect.empty() || effect.find('\0') != std::string::npos) {
        throw InvalidArgumentError("the body must name an \"effect\" (or hold \"all\": true)");
      }
      const auto* force = body.if_contains("force");
      if (command == "kill" && force != nullptr && force->is_bool() && force->as_bool()) {
        args.push_back("--force");  // an effect id nothing uses yet
      }
      args.insert(args.end(), {"--", effect});
      return args;
    };
  };
  routes.post("/api/v1/kill", operation(effectArgs("kill")));
  routes.post("/api/v1/unkill", operation(effectArgs("unkill")));
  routes.post("/api/v1/sweep/dry-run", operation([this](const Request&) {
                std::vector<std::string> args{"sweep", "--dry-run", "--json"};
                args.insert(args.end(), configArgs_.begin(), configArgs_.end());
                return args;
              }));
}

}  // namespace loom::inspect
