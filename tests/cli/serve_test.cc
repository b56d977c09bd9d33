// `loom serve` as an operator runs it (docs/spec/http-api.md): the real binary serving a real
// home, asked over HTTP by a client on 127.0.0.1. Runs, a run's events and timeline page by
// page (a 10,000-step run included), an agent run's offloaded, tainted and approval frames,
// blobs only through a run that cites them (each read journaled), operations run as `loom`
// commands, and every access refusal: read-only, token, Host, CSRF.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "loom/kernel/sqlite_event_store.h"
#include "support/loom_process.h"
#include "support/loopback.h"
#include "support/postgres_server.h"
#include "serve_fixture.h"

namespace loom::testing {
namespace {



TEST_F(ServeCli, ListsRunsByStatusPageByPage) {
  for (std::string id : {"a1", "a2", "a3"}) {
    ASSERT_EQ(0, loom({"run", "example.approval", "--id", id}).exitCode);
  }
  ASSERT_EQ(0, loom({"run", "example.steps", "--id", "s1", "--input",
                     R"({"steps": 2, "sleepMs": 0, "witness": ")" + dir_ / "w.txt" + "\"}"})
                   .exitCode);
  serve();
  auto [status, first] = get("/api/v1/executions?limit=2");
  ASSERT_EQ(200, status) << json::toText(first);
  ASSERT_EQ(2u, first.at("executions").as_array().size());
  EXPECT_EQ("a1", first.at("executions").at(0).at("id"));
  EXPECT_EQ("parked", first.at("executions").at(0).at("status"));
  ASSERT_EQ("a2", first.at("next"));
  auto [status2, second] = get("/api/v1/executions?limit=2&after=a2");
  ASSERT_EQ(200, status2);
  ASSERT_EQ(2u, second.at("executions").as_array().size());
  EXPECT_EQ("s1", second.at("executions").at(1).at("id"));
  EXPECT_EQ("completed", second.at("executions").at(1).at("status"));
  EXPECT_TRUE(second.at("next").is_null());

  auto [status3, parked] = get("/api/v1/executions?status=parked");
  ASSERT_EQ(200, status3);
  EXPECT_EQ(3u, parked.at("executions").as_array().size());
  auto [bad, refused] = get("/api/v1/executions?status=sleeping");
  EXPECT_EQ(400, bad);
  EXPECT_EQ("invalidArgument", code(refused));
  EXPECT_NE(std::string(refused.at("error").at("message").as_string()).find("sleeping"),
            std::string::npos);
  auto [missing, notFound] = get("/api/v1/executions/nope");
  EXPECT_EQ(404, missing);
  EXPECT_EQ("notFound", code(notFound));
}

TEST_F(ServeCli, PagesThroughTheEventsAndTimelineOfA10000StepRun) {
  ASSERT_EQ(0, loom({"--durability", "normal", "run", "example.steps", "--id", "big", "--input",
                     R"({"steps": 10000, "sleepMs": 0, "witness": ")" + dir_ / "w.txt" + "\"}"})
                   .exitCode);
  serve();
  int64_t events = 0;
  int64_t pages = 0;
  json::value from = 1;
  while (!from.is_null()) {
    auto [status, page] =
        get("/api/v1/executions/big/events?limit=1000&from=" + json::toText(from));
    ASSERT_EQ(200, status) << json::toText(page);
    const auto& list = page.at("events").as_array();
    ASSERT_LE(list.size(), 1000u);
    if (!list.empty()) {
      EXPECT_EQ(list.front().at("seq"), from);
    }
    events += static_cast<int64_t>(list.size());
    from = page.at("next");
    ++pages;
  }
  EXPECT_EQ(10002, events) << "started, 10,000 steps, completed";
  EXPECT_EQ(11, pages);

  int64_t steps = 0;
  from = 1;
  while (!from.is_null()) {
    auto [status, page] =
        get("/api/v1/executions/big/timeline?limit=500&from=" + json::toText(from));
    ASSERT_EQ(200, status) << json::toText(page);
    for (const auto& item : page.at("items").as_array()) {
      if (item.at("kind") == "step") {
        ++steps;
        EXPECT_EQ("completed", item.at("status"));
      }
    }
    from = page.at("next");
  }
  EXPECT_EQ(10000, steps);

  auto [sized, sizes] = get("/api/v1/executions/big/sizes?points=100");
  ASSERT_EQ(200, sized) << json::toText(sizes);
  const auto& points = sizes.at("points").as_array();
  ASSERT_LE(points.size(), 100u);
  ASSERT_GE(points.size(), 90u);
  auto [summarized, run] = get("/api/v1/executions/big");
  ASSERT_EQ(200, summarized);
  EXPECT_EQ(run.at("logBytes"), points.back().at("logBytes")) << "as `loom ls` measures it";
  EXPECT_EQ(run.at("stateBytes"), points.back().at("stateBytes"));
  EXPECT_EQ(10002, points.back().at("seq"));
  EXPECT_LT(points.front().at("logBytes").as_int64(), points.back().at("logBytes").as_int64());
  auto [bad, refused] = get("/api/v1/executions/big/events?limit=5000");
  EXPECT_EQ(400, bad);
  EXPECT_NE(std::string(refused.at("error").at("message").as_string()).find("'limit'"),
            std::string::npos);
}

// Writes an agent's log of `turns` turns (a model step asking for one tool call, the call's
// result) straight into the home's store, as the agent loop records them: a 10,000-turn run
// in a second, where running one takes minutes.
void writeLongAgentRun(const std::string& home, const std::string& id, int turns) {
  std::filesystem::create_directories(home);
  kernel::SqliteEventStore store(
      kernel::SqliteEventStoreOptions{.path = home + "/loom.db",
                                      .durability = kernel::Durability::kNormal});
  auto event = [](kernel::EventType type, json::object data) {
    return kernel::Event{.type = type, .atMillis = 1'795'000'000'000, .data = std::move(data)};
  };
  std::vector<kernel::Event> events;
  events.push_back(event(kernel::EventType::kExecutionStarted,
                         {{"workflow", "agent:long"}, {"input", {{"prompt", "read it all"}}}}));
  for (int i = 1; i <= turns; ++i) {
    std::string turn = "long#turn:" + std::to_string(i);
    json::object call{{"id", "c" + std::to_string(i)},
                      {"name", "fetch_report"},
                      {"arguments", {{"page", i}}}};
    events.push_back(event(
        kernel::EventType::kStepCompleted,
        {{"stepId", turn + ":model"},
         {"taskKind", "llm"},
         {"effectId", "scripted"},
         {"output", {{"content", nullptr},
                     {"toolCalls", json::array{call}},
                     {"usage", {{"inputTokens", 10}, {"outputTokens", 2}}}}}}));
    events.push_back(event(kernel::EventType::kStepCompleted,
                           {{"stepId", turn + ":tool:0"},
                            {"taskKind", "tool"},
                            {"effectId", "fetch_report"},
                            {"output", {{"page", i}, {"body", "page text"}}}}));
  }
  events.push_back(event(kernel::EventType::kExecutionCompleted, {{"output", "done"}}));
  store.append(id, 1, std::move(events));
}

TEST_F(ServeCli, PagesThroughTheTimelineOfA10000TurnAgentRun) {
  writeLongAgentRun(home(), "long", 10'000);
  serve();
  int64_t turns = 0;
  int64_t pages = 0;
  int64_t lastTurn = 0;
  json::value from = 1;
  while (!from.is_null()) {
    auto [status, page] =
        get("/api/v1/executions/long/timeline?limit=500&from=" + json::toText(from));
    ASSERT_EQ(200, status) << json::toText(page);
    for (const auto& item : page.at("items").as_array()) {
      if (item.at("kind") != "turn") continue;
      ++turns;
      EXPECT_EQ(lastTurn + 1, item.at("turn").as_int64()) << "no turn lost or split by a page";
      lastTurn = item.at("turn").as_int64();
      ASSERT_EQ(1u, item.at("tools").as_array().size());
      EXPECT_EQ("completed", item.at("tools").at(0).at("status"));
    }
    from = page.at("next");
    ++pages;
  }
  EXPECT_EQ(10'000, turns);
  EXPECT_EQ(21, pages) << "20 pages of 500 turns, then the run's end";
  auto [status, run] = get("/api/v1/executions/long");
  ASSERT_EQ(200, status);
  EXPECT_EQ("completed", run.at("status"));
  EXPECT_EQ(json::parse(R"({"inputTokens":100000,"outputTokens":20000,"modelTurns":10000})",
                        "expected"),
            run.at("usage"));
}

TEST_F(ServeCli, AgentRunShowsOffloadedAndTaintedFramesAndIsApprovedOverHttp) {
  writeAgentApp(dir_);
  Outcome run = loom({"run", dir_ / "agent.toml", "--id", "ag"});
  ASSERT_EQ(0, run.exitCode) << run.err;
  serve();
  auto [status, timeline] = get("/api/v1/executions/ag/timeline");
  ASSERT_EQ(200, status) << json::toText(timeline);
  const json::value* firstTurn = nullptr;
  for (const auto& item : timeline.at("items").as_array()) {
    if (item.at("kind") == "turn" && item.at("turn") == 1) firstTurn = &item;
  }
  ASSERT_NE(nullptr, firstTurn) << json::toText(timeline);
  const auto& tools = firstTurn->at("tools").as_array();
  ASSERT_EQ(2u, tools.size());
  EXPECT_EQ("search", tools[0].at("name"));
  EXPECT_EQ(json::parse(R"(["tool:search"])", "expected"), tools[0].at("taint"));
  EXPECT_TRUE(tools[0].at("envelope").is_null());
  EXPECT_EQ("fetch_report", tools[1].at("name"));
  ASSERT_TRUE(tools[1].at("envelope").is_object()) << json::toText(tools[1]);
  EXPECT_TRUE(tools[1].at("result").is_null());
  std::string address(tools[1].at("envelope").at("address").as_string());
  EXPECT_GT(tools[1].at("envelope").at("size").as_int64(), 256);
  EXPECT_EQ("fetch_report", firstTurn->at("model").at("toolCalls").at(1).at("name"));

  auto [blobStatus, blob] = get("/api/v1/executions/ag/blobs/" + address);
  ASSERT_EQ(200, blobStatus) << json::toText(blob);
  EXPECT_NE(json::toText(blob.at("value")).find("page"), std::string::npos);
  // Every blob read is journaled in the control log (read here with Debian's sqlite3).
  std::string control = dir_ / "control.txt";
  ASSERT_EQ(0, std::system(("sqlite3 '" + home() + "/loom.db' 'SELECT body FROM control' > '" +
                            control + "'")
                               .c_str()));
  std::string read = fileText(control);
  EXPECT_NE(read.find("BLOB_READ"), std::string::npos) << read;
  EXPECT_NE(read.find(address), std::string::npos) << read;

  auto [stateStatus, state] = get("/api/v1/executions/ag/state");
  ASSERT_EQ(200, stateStatus) << json::toText(state);
  EXPECT_EQ("inspect", state.at("loops").at(0).at("loop")) << "what `loom state --json` prints";
  EXPECT_GT(state.at("loops").at(0).at("stateBytes").as_int64(), 0);

  auto [statsStatus, stats] = get("/api/v1/content");
  ASSERT_EQ(200, statsStatus) << json::toText(stats);
  EXPECT_GE(stats.at("blobs").as_int64(), 1);
  EXPECT_GT(stats.at("bytes").as_int64(), 256);

  std::string other(64, '0');
  auto [uncited, refused] = get("/api/v1/executions/ag/blobs/" + other);
  EXPECT_EQ(404, uncited) << "a blob is reachable only through a run that cites it";
  EXPECT_EQ("notFound", code(refused));

  auto [approvalsStatus, approvals] = get("/api/v1/approvals");
  ASSERT_EQ(200, approvalsStatus);
  ASSERT_EQ(1u, approvals.at("approvals").as_array().size()) << json::toText(approvals);
  const auto& pending = approvals.at("approvals").at(0);
  EXPECT_EQ("publish", pending.at("tool"));
  EXPECT_EQ(json::parse(R"({"pages": 1})", "expected"), pending.at("arguments"));
  std::string stepId(pending.at("stepId").as_string());

  auto [csrf, csrfRefused] =
      post("/api/v1/executions/ag/approvals/" + encodedSegment(stepId), R"({"approved": true})", {});
  EXPECT_EQ(403, csrf) << "no X-Loom-Request header: a cross-site form";
  EXPECT_EQ("forbidden", code(csrfRefused));
  for (const char* wrong :
       {R"({"approved": "yes"})", R"({"approve": true})", R"({"approved": true, "by": "ann"})"}) {
    auto [mistyped, why] = post("/api/v1/executions/ag/approvals/" + encodedSegment(stepId), wrong);
    EXPECT_EQ(400, mistyped) << wrong;
    EXPECT_NE(json::toText(why).find("an approval decision must be"), std::string::npos)
        << json::toText(why);
    auto [signalled, viaSignal] =
        post("/api/v1/executions/ag/signals/" + encodedSegment(stepId), wrong);
    EXPECT_EQ(400, signalled) << "the signal route takes the same shape: "
                              << json::toText(viaSignal);
  }
  ASSERT_EQ(1u, get("/api/v1/approvals").second.at("approvals").as_array().size())
      << "a refused decision records nothing";
  auto [approved, result] =
      post("/api/v1/executions/ag/approvals/" + encodedSegment(stepId), R"({"approved": true})");
  ASSERT_EQ(200, approved) << json::toText(result);
  EXPECT_EQ("completed", result.at("status"));
  auto [after, run2] = get("/api/v1/executions/ag");
  ASSERT_EQ(200, after);
  EXPECT_EQ("completed", run2.at("status"));
  EXPECT_TRUE(run2.at("pendingApprovals").as_array().empty());
  EXPECT_EQ(3, run2.at("usage").at("modelTurns"));

  // The approval's park and decision stay in turn 2's item: one card per turn.
  auto [again, after2] = get("/api/v1/executions/ag/timeline");
  ASSERT_EQ(200, again);
  int turn2 = 0;
  for (const auto& item : after2.at("items").as_array()) {
    if (item.at("kind") != "turn" || item.at("turn") != 2) continue;
    ++turn2;
    EXPECT_EQ("EXECUTION_PARKED", item.at("events").at(0).at("type")) << json::toText(item);
    EXPECT_EQ("approval", item.at("events").at(0).at("reason"));
    const auto& publish = item.at("tools").at(0);
    EXPECT_EQ("publish", publish.at("name")) << json::toText(publish);
    EXPECT_EQ("completed", publish.at("status"));
    EXPECT_EQ(true, publish.at("approval").at("approved")) << json::toText(publish);
  }
  EXPECT_EQ(1, turn2) << json::toText(after2);
}

// The approval is recorded and the run then fails (its script has no turn 2): the answer is
// the run's outcome, not an error that would tell the client nothing was recorded.
TEST_F(ServeCli, AnApprovalRecordedBeforeTheRunFailsAnswersWithTheFailedRun) {
  std::ofstream(dir_ / "one.json")
      << R"({"turns": [{"toolCalls": [{"name": "publish", "arguments": {}}]}]})";
  std::ofstream(dir_ / "one.toml")
      << "[agent]\nname = \"one\"\nprompt = \"p\"\n[model]\nkind = \"scripted\"\n"
         "script = \"one.json\"\n[[tools]]\nname = \"publish\"\ncommand = [\""
      << kTools << "publish\"]\nrequiresApproval = true\n";
  ASSERT_EQ(0, loom({"run", dir_ / "one.toml", "--id", "f2"}).exitCode);
  serve();
  auto [status, body] = post("/api/v1/executions/f2/approvals/" + encodedSegment("one#turn:1:tool:0"),
                             R"({"approved": true})");
  EXPECT_EQ(200, status) << json::toText(body);
  EXPECT_EQ("failed", body.at("status")) << json::toText(body);
}

TEST_F(ServeCli, OperationsRunAsLoomCommandsAndSayWhyTheyAreRefused) {
  ASSERT_EQ(0, loom({"run", "example.approval", "--id", "p1"}).exitCode);
  ASSERT_EQ(0, loom({"run", "example.approval", "--id", "p2"}).exitCode);
  serve();
  auto [never, neverBody] = post("/api/v1/executions/p1/signals/nope", "true");
  EXPECT_EQ(400, never) << json::toText(neverBody);
  EXPECT_NE(std::string(neverBody.at("error").at("message").as_string()).find("never waited"),
            std::string::npos);
  auto [notRetrying, retryBody] = post("/api/v1/executions/p1/retry", "{}");
  EXPECT_EQ(409, notRetrying) << json::toText(retryBody);
  EXPECT_EQ("failedPrecondition", code(retryBody));
  auto [signalled, signalBody] = post("/api/v1/executions/p1/signals/approve", R"({"ok": 1})");
  ASSERT_EQ(200, signalled) << json::toText(signalBody);
  EXPECT_EQ("completed", signalBody.at("status"));
  auto [cancelled, cancelBody] = post("/api/v1/executions/p2/cancel", R"({"reason": "test"})");
  ASSERT_EQ(200, cancelled) << json::toText(cancelBody);
  EXPECT_EQ("cancelled", cancelBody.at("status"));
  auto [killed, killBody] = post("/api/v1/kill", R"({"effect": "example.step"})");
  ASSERT_EQ(200, killed) << json::toText(killBody);
  auto [listed, stops] = get("/api/v1/killed");
  ASSERT_EQ(200, listed);
  EXPECT_EQ("example.step", stops.at("stops").at(0).at("effectId"));
  auto [unkilled, unkillBody] = post("/api/v1/unkill", R"({"effect": "example.step"})");
  EXPECT_EQ(200, unkilled) << json::toText(unkillBody);
  auto [dry, sweep] = post("/api/v1/sweep/dry-run", "{}");
  ASSERT_EQ(200, dry) << json::toText(sweep);
  EXPECT_EQ(true, sweep.at("dryRun"));
  // An id may hold '/': the page sends it encoded, and every route of a run still finds it.
  ASSERT_EQ(0, loom({"run", "example.approval", "--id", "team/p3"}).exitCode);
  auto [slashed, slashedRun] = get("/api/v1/executions/" + encodedSegment("team/p3"));
  ASSERT_EQ(200, slashed) << json::toText(slashedRun);
  EXPECT_EQ("team/p3", slashedRun.at("id"));
  auto [slashedTimeline, items] = get("/api/v1/executions/" + encodedSegment("team/p3") + "/timeline");
  EXPECT_EQ(200, slashedTimeline) << json::toText(items);
  auto [slashedCancel, slashedBody] =
      post("/api/v1/executions/" + encodedSegment("team/p3") + "/cancel", "{}");
  ASSERT_EQ(200, slashedCancel) << json::toText(slashedBody);
  EXPECT_EQ("cancelled", slashedBody.at("status"));

  auto [badBody, badBodyRefused] = post("/api/v1/kill", "{not json");
  EXPECT_EQ(400, badBody);
  EXPECT_EQ("invalidArgument", code(badBodyRefused));
}

// Fork and rerun over HTTP are `loom fork` and `loom rerun`: each answers with the new run.
TEST_F(ServeCli, ForkAndRerunMakeNewRunsAndSayWhyTheyAreRefused) {
  ASSERT_EQ(0, loom({"run", "example.steps", "--id", "s1", "--input", R"({"steps": 3})"}).exitCode);
  const std::string config = dir_ / "loom.toml";
  std::ofstream(config) << "[execution.retry]\nmaxAttempts = 1\n";
  const std::string missing = dir_ / "out";
  ASSERT_EQ(1, loom({"run", "example.steps", "--config", config, "--id", "bad", "--input",
                     R"({"steps": 2, "witness": ")" + missing + R"(/w.txt"})"})
                   .exitCode);
  serve();
  auto [forked, fork] = post("/api/v1/executions/s1/fork", R"({"at": "step-2", "id": "f1"})");
  ASSERT_EQ(200, forked) << json::toText(fork);
  EXPECT_EQ("f1", fork.at("id"));
  EXPECT_EQ("completed", fork.at("status"));
  EXPECT_EQ(1, fork.at("replayedSteps").to_number<int64_t>()) << json::toText(fork);
  auto [bySeq, seqFork] = post("/api/v1/executions/s1/fork", R"({"at": 3, "input": {"steps": 1}})");
  ASSERT_EQ(200, bySeq) << json::toText(seqFork);
  EXPECT_EQ(1, seqFork.at("output")) << "the new input";
  auto [noPoint, noPointBody] = post("/api/v1/executions/s1/fork", "{}");
  EXPECT_EQ(400, noPoint) << json::toText(noPointBody);
  auto [noStep, noStepBody] = post("/api/v1/executions/s1/fork", R"({"at": "step-9"})");
  EXPECT_EQ(404, noStep) << json::toText(noStepBody);
  auto [notFailed, notFailedBody] = post("/api/v1/executions/s1/rerun", "{}");
  EXPECT_EQ(409, notFailed) << json::toText(notFailedBody);
  EXPECT_EQ("failedPrecondition", code(notFailedBody));

  std::filesystem::create_directory(missing);
  auto [rerun, rerunBody] = post("/api/v1/executions/bad/rerun", R"({"id": "good"})");
  ASSERT_EQ(200, rerun) << json::toText(rerunBody);
  EXPECT_EQ("good", rerunBody.at("id"));
  EXPECT_EQ("completed", rerunBody.at("status"));
}

TEST_F(ServeCli, ReadOnlyServesNoOperationAndForeignHostsAreRefused) {
  ASSERT_EQ(0, loom({"run", "example.approval", "--id", "r1"}).exitCode);
  serve({"--read-only"});
  auto [status, server] = get("/api/v1/server");
  ASSERT_EQ(200, status);
  EXPECT_EQ(true, server.at("readOnly"));
  auto [refusedStatus, refused] = post("/api/v1/executions/r1/cancel", "{}");
  EXPECT_EQ(403, refusedStatus);
  EXPECT_EQ("readOnly", code(refused));
  auto [listStatus, list] = get("/api/v1/executions");
  EXPECT_EQ(200, listStatus);
  EXPECT_EQ("parked", list.at("executions").at(0).at("status")) << "nothing was cancelled";
  auto [rebound, rebinding] =
      get("/api/v1/executions", {{"Host", "evil.example:" + std::to_string(port_)}});
  EXPECT_EQ(403, rebound) << "a DNS-rebinding page must not read a loopback server";
  EXPECT_EQ("forbidden", code(rebinding));
}

TEST_F(ServeCli, ARefusedRequestCannotSmuggleAnotherInItsBody) {
  ASSERT_EQ(0, loom({"run", "example.approval", "--id", "victim"}).exitCode);
  serve();
  // A cross-site no-cors POST (text/plain, refused before its body is read) whose body is a
  // well-formed request with the headers the CSRF check wants.
  std::string inner = "{\"reason\": \"smuggled\"}";
  std::string smuggled = "POST /api/v1/executions/victim/cancel HTTP/1.1\r\nHost: 127.0.0.1:" +
                         std::to_string(port_) +
                         "\r\nContent-Type: application/json\r\nX-Loom-Request: 1\r\n"
                         "Content-Length: " +
                         std::to_string(inner.size()) + "\r\n\r\n" + inner;
  std::string outer = "POST /api/v1/executions/victim/cancel HTTP/1.1\r\nHost: 127.0.0.1:" +
                      std::to_string(port_) +
                      "\r\nOrigin: http://evil.example\r\nContent-Type: text/plain\r\n"
                      "Content-Length: " +
                      std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled;
  std::string answer = rawExchange(port_, outer);
  EXPECT_NE(answer.find("403"), std::string::npos) << answer;
  EXPECT_EQ(std::string::npos, answer.find("cancelled\"")) << answer;
  auto [status, run] = get("/api/v1/executions/victim");
  ASSERT_EQ(200, status);
  EXPECT_EQ("parked", run.at("status")) << "the smuggled cancel never ran";

  std::string big(100 * 1024, 'x');
  auto r = client().Post("/api/v1/executions/victim/signals/approve",
                         {{"X-Loom-Request", "1"}}, "\"" + big + "\"", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(413, r->status) << "bodies are capped at 64 KiB";
}

TEST_F(ServeCli, AnExposedBindNeedsATokenAndEveryApiRequestCarriesIt) {
  ASSERT_EQ(0, loom({"run", "example.approval", "--id", "t1"}).exitCode);
  Outcome exposed = loom({"serve", "--bind", "0.0.0.0", "--port", "0"});
  EXPECT_EQ(2, exposed.exitCode);
  EXPECT_NE(exposed.err.find("needs a token"), std::string::npos) << exposed.err;
  EXPECT_NE(exposed.err.find("--token-file"), std::string::npos) << exposed.err;
  std::string token(40, 'k');
  std::ofstream(dir_ / "token") << token << "\n";
  std::ofstream(dir_ / "short") << "abc\n";
  Outcome weak = loom({"serve", "--token-file", dir_ / "short"});
  EXPECT_EQ(2, weak.exitCode);
  EXPECT_NE(weak.err.find("at least 32"), std::string::npos) << weak.err;
  std::ofstream(dir_ / "empty") << "\n";
  Outcome empty = loom({"serve", "--token-file", dir_ / "empty"});
  EXPECT_EQ(2, empty.exitCode) << "an empty token must not mean no token";
  EXPECT_NE(empty.err.find("holds no token"), std::string::npos) << empty.err;
  serve({"--token-file", dir_ / "token"});
  auto [none, noneBody] = get("/api/v1/executions");
  EXPECT_EQ(401, none);
  EXPECT_EQ("unauthenticated", code(noneBody));
  auto [wrong, wrongBody] =
      get("/api/v1/executions", {{"Authorization", "Bearer " + std::string(40, 'x')}});
  EXPECT_EQ(401, wrong);
  auto [ok, list] = get("/api/v1/executions", {{"Authorization", "Bearer " + token}});
  ASSERT_EQ(200, ok);
  EXPECT_EQ("t1", list.at("executions").at(0).at("id"));
  auto page = client().Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(200, page->status) << "the page itself holds no data";
  EXPECT_NE(page->body.find("<html"), std::string::npos);
  EXPECT_EQ("DENY", page->get_header_value("X-Frame-Options"));
}

TEST_F(ServeCli, SealedRunsAreRefusedWithoutKeysAndShownWithThem) {
  std::string app = std::string(LOOM_SOURCE_DIR) + "/examples/agents/compliance.toml";
  Outcome key = runLoom({"keys", "new-master"}, dir_);
  ASSERT_EQ(0, key.exitCode);
  std::string master = "LOOM_MASTER_KEY=" + key.out.substr(0, key.out.find('\n'));
  env_ = {master};
  ASSERT_EQ(0, loom({"run", app, "--subject", "alice", "--id", "s1", "--prompt",
                     "alice-secret-prompt"})
                   .exitCode);
  env_ = {"LOOM_MASTER_KEY="};
  serve();
  auto [listed, list] = get("/api/v1/executions");
  ASSERT_EQ(200, listed) << "metadata stays readable: " << json::toText(list);
  EXPECT_EQ("alice", list.at("executions").at(0).at("subject"));
  auto [sealed, refused] = get("/api/v1/executions/s1/timeline");
  EXPECT_EQ(403, sealed) << "sealed without keys is refused, never shown empty";
  EXPECT_EQ("sealed", code(refused));
  EXPECT_NE(std::string(refused.at("error").at("message").as_string()).find("LOOM_MASTER_KEY"),
            std::string::npos)
      << json::toText(refused);
  auto [events, eventsRefused] = get("/api/v1/executions/s1/events");
  EXPECT_EQ(403, events);
  server_.reset();
  env_ = {master};
  serve();
  auto [opened, timeline] = get("/api/v1/executions/s1/timeline");
  ASSERT_EQ(200, opened) << json::toText(timeline);
  auto [read, log] = get("/api/v1/executions/s1/events");
  ASSERT_EQ(200, read);
  EXPECT_NE(json::toText(log).find("alice-secret-prompt"), std::string::npos)
      << "with the key the run reads decrypted";
}

TEST_F(ServeCli, ServesRunsAStoreOnPostgreSqlHoldsAndApprovesThemThere) {
  LOOM_SKIP_WITHOUT_POSTGRES();
  std::string url = testPostgresUrl();
  env_ = {"LOOM_DATABASE_URL=" + url, "LOOM_DATABASE_SCHEMA=" + testSchemaFor(dir_.path())};
  ASSERT_EQ(0, loom({"db", "migrate"}).exitCode);
  writeAgentApp(dir_);
  Outcome run = loom({"run", dir_ / "agent.toml", "--id", "pg"});
  ASSERT_EQ(0, run.exitCode) << run.err;
  serve();
  auto [status, server] = get("/api/v1/server");
  ASSERT_EQ(200, status);
  std::string store(server.at("store").as_string());
  EXPECT_NE(store.find("postgresql"), std::string::npos) << store;
  auto at = url.find('@');
  auto colon = url.find(':', url.find("://") + 3);
  if (colon < at) {
    EXPECT_EQ(std::string::npos, store.find(url.substr(colon + 1, at - colon - 1)))
        << "the password never leaves the server";
  }
  auto [listed, list] = get("/api/v1/executions");
  ASSERT_EQ(200, listed) << json::toText(list);
  EXPECT_EQ("pg", list.at("executions").at(0).at("id"));
  EXPECT_EQ("parked", list.at("executions").at(0).at("status"));
  auto [approvalsStatus, approvals] = get("/api/v1/approvals");
  ASSERT_EQ(200, approvalsStatus);
  ASSERT_EQ(1u, approvals.at("approvals").as_array().size()) << json::toText(approvals);
  std::string stepId(approvals.at("approvals").at(0).at("stepId").as_string());
  auto [timelineStatus, timeline] = get("/api/v1/executions/pg/timeline");
  ASSERT_EQ(200, timelineStatus);
  std::string address(
      timeline.at("items").at(1).at("tools").at(1).at("envelope").at("address").as_string());
  auto [blobStatus, blob] = get("/api/v1/executions/pg/blobs/" + address);
  EXPECT_EQ(200, blobStatus) << json::toText(blob);
  auto [approved, result] =
      post("/api/v1/executions/pg/approvals/" + encodedSegment(stepId), R"({"approved": true})");
  ASSERT_EQ(200, approved) << json::toText(result);
  EXPECT_EQ("completed", result.at("status"));
  Outcome ls = loom({"ls", "--json"});
  EXPECT_EQ("completed", ls.json().at(0).at("status")) << "approved in the shared schema";
}

}  // namespace
}  // namespace loom::testing
