// `loom` end to end for the claim-check opt-in and the content lifetime: the 200-turn
// examples/agents/claim-check.toml app parks for approval, a fresh process approves it (from
// the park's snapshot) and reports 0 content-store calls made by the replay (ADR 0140 D6); `loom
// sweep` keeps every retained blob; `loom retention run` archives the log and `loom log` still
// reads it; `loom bench claim-check` prints its rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

const std::string kApp = std::string(LOOM_SOURCE_DIR) + "/examples/agents/claim-check.toml";
const std::string kApproval = "approve:claim-check#turn:201:tool:0";

TEST(ClaimCheckCli, ParkedRunResumesWithZeroContentStoreCallsAndTheSweepKeepsItsBlobs) {
  TempDir dir;
  std::string home = dir / "home";
  Outcome run = runLoom({"--home", home, "run", kApp, "--id", "cc", "--json"}, dir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.json().at("status").as_string(), "parked");

  Outcome approve =
      runLoom({"--home", home, "signal", "cc", kApproval, R"({"approved": true})", "--json"}, dir);
  ASSERT_EQ(approve.exitCode, 0) << approve.err;
  json::value r = approve.json();
  EXPECT_EQ(r.at("status").as_string(), "completed");
  // The park's snapshot holds the loop's checkpoint at turn 201: the resume replays that turn's
  // model step alone (docs/adr/0011-loop-checkpoints.md), and rebuilds the transcript for turn
  // 202 from the log, envelopes and all, without reading a blob.
  EXPECT_EQ(r.at("replayedSteps").as_int64(), 1);
  EXPECT_EQ(r.at("replayContentStoreCalls").as_int64(), 0);

  Outcome sweep = runLoom({"--home", home, "sweep", "--json"}, dir);
  ASSERT_EQ(sweep.exitCode, 0) << sweep.err;
  json::value report = sweep.json();
  EXPECT_EQ(report.at("deleted").as_int64(), 0);
  EXPECT_EQ(report.at("kept").at("loadBearing").as_int64(), 201);  // 200 pages + 1 search

  // Retention archives the ended run; its blobs stay pinned and its log stays readable.
  std::string config = dir / "retention.toml";
  { std::ofstream(config) << "[storage.retention]\nafterDays = 0\n"; }
  Outcome retention =
      runLoom({"--home", home, "retention", "run", "--config", config, "--json"}, dir);
  ASSERT_EQ(retention.exitCode, 0) << retention.err;
  EXPECT_EQ(retention.json().at("archived").as_int64(), 1);
  Outcome log = runLoom({"--home", home, "log", "cc", "--json"}, dir);
  ASSERT_EQ(log.exitCode, 0) << log.err;
  EXPECT_EQ(log.json().as_array().size(), 408u);
  Outcome after = runLoom({"--home", home, "sweep", "--json"}, dir);
  EXPECT_EQ(after.json().at("kept").at("archive").as_int64(), 201);
  EXPECT_EQ(after.json().at("deleted").as_int64(), 0);

  // The archive's disk is not mounted: the segment retention journaled is gone from the
  // folder. Nothing takes the run for gone or its blobs for unneeded.
  std::filesystem::path segment = retention.json().at("segment").as_string().c_str();
  std::filesystem::path away = dir.path() / segment.filename();
  std::filesystem::rename(segment, away);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"sweep", "--grace-hours", "0"}, {"log", "cc"}}) {
    std::vector<std::string> call{"--home", home};
    call.insert(call.end(), args.begin(), args.end());
    Outcome refused = runLoom(call, dir);
    EXPECT_NE(refused.exitCode, 0) << args[0];
    EXPECT_NE(refused.err.find(segment.filename().string()), std::string::npos) << refused.err;
  }
  std::filesystem::rename(away, segment);
  Outcome back = runLoom({"--home", home, "sweep", "--grace-hours", "0", "--json"}, dir);
  ASSERT_EQ(back.exitCode, 0) << back.err;
  EXPECT_EQ(back.json().at("deleted").as_int64(), 0) << "the archived run's blobs were kept";
}

// Processes that open a new home at the same moment (a script starting runs in parallel) all
// run: setting WAL mode on the new loom.db and the content store's start-up temp files raced
// before (one in a few dozen starts failed with "database is locked" or "temp files keep
// being removed").
TEST(HomeCli, ProcessesOpeningANewHomeAtOnceAllRun) {
  TempDir dir;
  for (int round = 0; round < 8; ++round) {
    std::string home = dir / ("home" + std::to_string(round));
    std::vector<std::unique_ptr<Child>> runs;
    for (int i = 0; i < 8; ++i) {
      runs.push_back(std::make_unique<Child>(
          std::vector<std::string>{"--home", home, "run", "example.steps", "--input",
                                   R"({"steps": 1})", "--id", "r" + std::to_string(i)},
          dir));
    }
    for (auto& r : runs) {
      Outcome ran = r->wait();
      EXPECT_EQ(ran.exitCode, 0) << "round " << round << ": " << ran.err;
    }
  }
}

TEST(ClaimCheckCli, RetentionWithoutConfigSaysWhatToAdd) {
  TempDir dir;
  std::string home = dir / "home";
  ASSERT_EQ(
      runLoom({"--home", home, "run", "example.steps", "--input", R"({"steps": 1})"}, dir).exitCode,
      0);
  Outcome r = runLoom({"--home", home, "retention", "run"}, dir);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("[storage.retention]"), std::string::npos) << r.err;
}

// A home (under `dir`) with one ended run, r1, and a config whose retention selects it.
std::pair<std::string, std::string> retentionHome(const TempDir& dir) {
  std::string home = dir / "home", config = dir / "retention.toml";
  Outcome run = runLoom(
      {"--home", home, "run", "example.steps", "--input", R"({"steps": 1})", "--id", "r1"}, dir);
  EXPECT_EQ(run.exitCode, 0) << run.err;
  std::ofstream(config) << "[storage.retention]\nafterDays = 0\n";
  return {home, config};
}

// After retention, every read command finds the run, marked as archived: before, `loom ls`
// and `loom state` said it did not exist while `loom log` printed it.
TEST(ClaimCheckCli, AnArchivedRunIsReadByEveryReadCommandMarkedArchived) {
  TempDir dir;
  auto [home, config] = retentionHome(dir);
  ASSERT_EQ(runLoom({"--home", home, "retention", "run", "--config", config}, dir).exitCode, 0);
  Outcome ls = runLoom({"--home", home, "ls", "--json"}, dir);
  ASSERT_EQ(ls.exitCode, 0) << ls.err;
  ASSERT_EQ(ls.json().as_array().size(), 1u) << ls.out;
  EXPECT_EQ(ls.json().at(0).at("id"), "r1");
  EXPECT_EQ(ls.json().at(0).at("status"), "completed");
  EXPECT_EQ(ls.json().at(0).at("archived"), true);
  Outcome table = runLoom({"--home", home, "ls"}, dir);
  EXPECT_NE(table.out.find("completed (archived)"), std::string::npos) << table.out;
  Outcome onlyArchived = runLoom({"--home", home, "ls", "--status", "archived", "--json"}, dir);
  EXPECT_EQ(onlyArchived.json().as_array().size(), 1u) << onlyArchived.out;
  Outcome state = runLoom({"--home", home, "state", "r1", "--json"}, dir);
  ASSERT_EQ(state.exitCode, 0) << state.err;
  EXPECT_EQ(state.json().at("archived"), true);
  EXPECT_EQ(state.json().at("status"), "completed") << state.out;
  Outcome log = runLoom({"--home", home, "log", "r1"}, dir);
  EXPECT_NE(log.out.find("(from the archive"), std::string::npos) << log.out;
  Outcome missing = runLoom({"--home", home, "state", "nope"}, dir);
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("no execution 'nope'"), std::string::npos) << missing.err;
}

// A retention run killed after its segment landed, before it removed the live log (loom.db as
// it was then), whose segment was then damaged on disk. Returns the segment's path.
std::filesystem::path killedRetentionWithADamagedSegment(const TempDir& dir,
                                                         const std::string& home,
                                                         const std::string& config) {
  std::filesystem::copy_file(home + "/loom.db", dir / "before.db");
  EXPECT_EQ(runLoom({"--home", home, "retention", "run", "--config", config}, dir).exitCode, 0);
  std::filesystem::copy_file(dir / "before.db", home + "/loom.db",
                             std::filesystem::copy_options::overwrite_existing);
  for (const char* f : {"/loom.db-wal", "/loom.db-shm"}) std::filesystem::remove(home + f);
  std::vector<std::filesystem::path> segments;
  for (const auto& e : std::filesystem::directory_iterator(home + "/archive")) {
    segments.push_back(e.path());
  }
  EXPECT_EQ(segments.size(), 1u);
  std::fstream damage(segments.at(0), std::ios::in | std::ios::out | std::ios::binary);
  damage.seekp(48);  // inside the execution's block, after the file header
  damage.put('\xff');
  return segments.at(0);
}

// The next run archives the log anew, removes it, names the damaged segment and exits 1,
// since the sweep now refuses that segment.
TEST(ClaimCheckCli, RetentionAroundADamagedSegmentFinishesButExitsOneNamingIt) {
  TempDir dir;
  auto [home, config] = retentionHome(dir);
  std::string segment = killedRetentionWithADamagedSegment(dir, home, config).filename();
  // A dry run reports what the real run would refuse, and changes nothing.
  Outcome dry = runLoom({"--home", home, "retention", "run", "--config", config, "--dry-run"}, dir);
  EXPECT_EQ(dry.exitCode, 1) << dry.out;
  EXPECT_NE(
      dry.out.find("segment " + segment + " does not read back whole: a real run would archive"),
      std::string::npos)
      << dry.out;
  EXPECT_NE(dry.err.find("dry run: 1 archive segment(s) did not read back whole"),
            std::string::npos)
      << dry.err;
  Outcome again = runLoom({"--home", home, "retention", "run", "--config", config, "--json"}, dir);
  EXPECT_EQ(again.exitCode, 1) << again.out;
  EXPECT_EQ(again.json().at("removed").as_int64(), 1) << "it finished";
  EXPECT_EQ(again.json().at("damagedSegments").at(0).as_string(), segment);
  EXPECT_NE(again.err.find("restore them from a backup"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("loom retention supersede"), std::string::npos) << again.err;
  Outcome log = runLoom({"--home", home, "log", "r1", "--json"}, dir);
  EXPECT_EQ(log.exitCode, 0) << "archived anew, whole: " << log.err;
}

// Once its runs are archived anew, the damaged segment is retired: the sweep refused it, naming
// the command; after `retention supersede` every reader leaves it out, and the file may go.
TEST(ClaimCheckCli, ADamagedSegmentArchivedAnewIsSupersededAndTheSweepGoesOn) {
  TempDir dir;
  const auto [home, config] = retentionHome(dir);
  const std::string homeDir = home;  // a lambda cannot capture a structured binding (clang)
  std::filesystem::path segment = killedRetentionWithADamagedSegment(dir, home, config);
  std::string name = segment.filename();
  auto loom = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", homeDir});
    return runLoom(args, dir);
  };
  // While the log is live, the damaged block is not its only copy either.
  Outcome early = loom({"retention", "supersede", name, "--dry-run", "--json"});
  ASSERT_EQ(early.exitCode, 0) << early.err;
  EXPECT_EQ(early.json().at("liveCopies"), 1);
  EXPECT_EQ(early.json().at("dryRun"), true);
  EXPECT_EQ(loom({"retention", "run", "--config", config}).exitCode, 1);  // archived anew
  Outcome refused = loom({"sweep"});
  EXPECT_EQ(refused.exitCode, 1);
  EXPECT_NE(refused.err.find("loom retention supersede " + name), std::string::npos) << refused.err;

  Outcome dry = loom({"retention", "supersede", name, "--dry-run"});
  ASSERT_EQ(dry.exitCode, 0) << dry.err;
  EXPECT_NE(dry.out.find("dry run"), std::string::npos) << dry.out;
  EXPECT_EQ(loom({"sweep"}).exitCode, 1) << "a dry run changed something";
  Outcome done = loom({"retention", "supersede", name, "--json"});
  ASSERT_EQ(done.exitCode, 0) << done.err;
  EXPECT_EQ(done.json().at("heldIn").as_array().size(), 1u) << done.out;
  EXPECT_EQ(done.json().at("damagedRuns").at(0), "r1") << done.out;
  Outcome swept = loom({"sweep"});
  EXPECT_EQ(swept.exitCode, 0) << swept.err;
  EXPECT_EQ(loom({"retention", "run", "--config", config}).exitCode, 0) << "no damage left";

  std::filesystem::rename(segment, dir / name);  // retired: the operator may move it away
  EXPECT_EQ(loom({"sweep"}).exitCode, 0);
  Outcome log = loom({"log", "r1"});
  EXPECT_EQ(log.exitCode, 0) << log.err;
  Outcome listed = loom({"ls", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  EXPECT_EQ(listed.json().at(0).at("archived"), true) << listed.out;
  Outcome repeat = loom({"retention", "supersede", name});
  EXPECT_EQ(repeat.exitCode, 0) << repeat.err;
  EXPECT_NE(repeat.out.find("superseded before"), std::string::npos) << repeat.out;
  Outcome missing = loom({"retention", "supersede"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("needs the SEGMENT"), std::string::npos) << missing.err;
}

// The archive's disk not mounted (its segment gone from where retention wrote it): the commands
// that would take its runs for absent refuse, naming the segment; migrate-home before it
// connects, so the copy never leaves them out.
TEST(ClaimCheckCli, ASegmentRetentionJournaledButTheArchiveLacksStopsEveryReader) {
  TempDir dir;
  auto [home, config] = retentionHome(dir);
  ASSERT_EQ(runLoom({"--home", home, "retention", "run", "--config", config}, dir).exitCode, 0);
  std::filesystem::rename(home + "/archive", dir / "unmounted");
  std::filesystem::create_directory(home + "/archive");
  for (std::vector<std::string> command :
       {std::vector<std::string>{"log", "r1"},
        {"sweep"},
        {"migrate-home", "--to", "postgresql://127.0.0.1:1/none"}}) {
    command.insert(command.begin(), {"--home", home});
    Outcome refused = runLoom(command, dir);
    EXPECT_EQ(refused.exitCode, 1) << command[2];
    EXPECT_NE(refused.err.find("which retention wrote"), std::string::npos)
        << command[2] << ": " << refused.err;
  }
}

TEST(ClaimCheckCli, BenchPrintsOneRowPerSetting) {
  TempDir dir;
  Outcome bench =
      runLoom({"bench", "claim-check", "--turns", "3", "--stores", "memory", "--json"}, dir);
  ASSERT_EQ(bench.exitCode, 0) << bench.err;
  json::value parsed = bench.json();
  const auto& rows = parsed.as_array();
  ASSERT_EQ(rows.size(), 6u);  // {full, delta} x {off, on, on-no-preview}
  for (const auto& row : rows) {
    for (const char* key : {"turns", "claimCheck", "journal", "stateBytes", "logBytes",
                            "zstdStateRatio", "wallSeconds"}) {
      EXPECT_TRUE(row.as_object().contains(key)) << key;
    }
  }
  EXPECT_EQ(bench.out.find("E0"), std::string::npos)
      << "numbers in plain decimal, not 6.011946081201065E0: " << bench.out;
  EXPECT_TRUE(rows.at(0).at("wallSeconds").is_double()) << bench.out;
  EXPECT_EQ(runLoom({"bench", "claim-check", "--turns", "x"}, dir).exitCode, 2);
  Outcome range = runLoom({"bench", "claim-check", "--turns", "x", "--json"}, dir);
  EXPECT_EQ(range.json().at("error").at("code"), "invalidArgument") << range.out;
}

TEST(ClaimCheckCli, ASweepDurationOutOfRangeNamesItsRangeBriefly) {
  TempDir dir;
  Outcome sweep = runLoom({"sweep", "--ttl-days", "-1"}, dir);
  EXPECT_EQ(sweep.exitCode, 2);
  EXPECT_LT(sweep.err.size(), 200u) << "no 300-digit range: " << sweep.err;
  EXPECT_NE(sweep.err.find("36500"), std::string::npos) << sweep.err;
}

}  // namespace
}  // namespace loom::testing
