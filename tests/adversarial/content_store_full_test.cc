// A full disk loses nothing, tried with a real full disk (a small tmpfs): first the home's blob
// folder, then the whole home. A tool result that cannot be offloaded is not recorded
// as the tool's failure: the run parks (contentStoreUnavailable) saying what happened, and once
// there is room `loom resume` completes, running again only the call whose result was not
// stored.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

const std::string kTools = std::string(LOOM_SOURCE_DIR) + "/examples/agents/tools";

// A tmpfs of `bytes` mounted at `path` for the scope (root only).
class SmallDisk {
 public:
  SmallDisk(std::string path, std::size_t bytes) : path_(std::move(path)) {
    std::filesystem::create_directories(path_);
    std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!mounted_) why_ = std::strerror(errno);
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& why() const { return why_; }
  bool grow(std::size_t bytes) {
    std::string options = "size=" + std::to_string(bytes);
    return ::mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT, options.c_str()) == 0;
  }

 private:
  std::string path_;
  bool mounted_ = false;
  std::string why_;
};

TEST(ContentStoreFull, AResultThatCannotBeStoredParksTheRunAndResumeCompletesAfterRoomIsMade) {
  TempDir dir;
  std::string home = dir / "home";
  std::filesystem::create_directories(home);
  std::filesystem::permissions(home, std::filesystem::perms::owner_all);
  SmallDisk disk(home + "/blobs", 16 << 10);  // four 4 KiB pages: a few blobs, then ENOSPC
  if (!disk.mounted()) GTEST_SKIP() << "mounting a small tmpfs needs root: " << disk.why();

  constexpr int kPages = 12;
  std::string turns;
  for (int p = 1; p <= kPages; ++p) {
    turns += "{\"toolCalls\": [{\"name\": \"fetch_report\", \"arguments\": {\"page\": " +
             std::to_string(p) + "}}]},";
  }
  std::ofstream(dir / "s.json") << "{\"turns\": [" << turns << "{\"answer\": \"done\"}]}";
  std::ofstream(dir / "app.toml")
      << "[agent]\nname = \"reader\"\nprompt = \"read\"\nmaxTurns = 20\n\n[model]\n"
      << "kind = \"scripted\"\nscript = \"s.json\"\n\n[[tools]]\nname = \"fetch_report\"\n"
      << "command = [\"" << kTools << "/fetch_report\"]\n\n[execution.claimCheck]\n"
      << "toolIds = [\"fetch_report\"]\n\n"
      // Every blob a file in the small folder (packed blobs would share loom.db's disk).
      << "[storage.contentStore]\npackBelowBytes = 0\n";
  std::string witness = dir / "witness.txt";
  std::vector<std::string> env = {"LOOM_TOOL_WITNESS=" + witness};

  Outcome run = runLoom({"--home", home, "run", dir / "app.toml", "--id", "r", "--json"}, dir, env);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  json::value result = run.json();
  ASSERT_EQ(result.at("status"), "parked") << run.out;
  EXPECT_EQ(result.at("parkReason"), "contentStoreUnavailable");
  EXPECT_NE(std::string(result.at("parkDetail").as_string()).find("No space left on device"),
            std::string::npos)
      << run.out;
  std::size_t ran = readLines(witness).size();
  ASSERT_GT(ran, 1u) << "some results were stored before the disk filled";
  ASSERT_LT(ran, static_cast<std::size_t>(kPages));

  Outcome log = runLoom({"--home", home, "log", "r", "--json"}, dir);
  ASSERT_EQ(log.exitCode, 0) << log.err;
  EXPECT_EQ(log.out.find("STEP_FAILED"), std::string::npos) << "a stored-nothing call was "
                                                               "recorded as the tool's failure";
  Outcome again = runLoom({"--home", home, "resume", "r"}, dir, env);  // as a person reads it
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_NE(again.out.find("status:   parked (contentStoreUnavailable"), std::string::npos)
      << "still no room: it parks again: " << again.out;
  EXPECT_NE(again.out.find("No space left on device"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("then loom retry r"), std::string::npos)
      << "the message names the run and the command that continues it: " << again.out;
  EXPECT_EQ(readLines(witness).size(), ran + 1) << "only the unstored call ran again";

  ASSERT_TRUE(disk.grow(4 << 20)) << std::strerror(errno);
  Outcome done = runLoom({"--home", home, "resume", "r", "--json"}, dir, env);
  ASSERT_EQ(done.exitCode, 0) << done.err;
  EXPECT_EQ(done.json().at("status"), "completed") << done.out;
  EXPECT_EQ(readLines(witness).size(), static_cast<std::size_t>(kPages) + 2)
      << "each page ran once, plus the two calls whose results were not stored";
  Outcome state = runLoom({"--home", home, "state", "r", "--json"}, dir);
  ASSERT_EQ(state.exitCode, 0) << state.err;
}

// The whole home on a small disk: loom.db itself fills up (its log, and the packed blobs that
// ride its commits). The run stops with exit 1 and a message that says the disk is full and
// which command continues the run; nothing is recorded as failed, and once there is room
// `loom resume` completes, running again at most the call whose result was not recorded.
TEST(ContentStoreFull, AFullDiskUnderTheLogStopsTheRunResumably) {
  TempDir dir;
  std::string home = dir / "home";
  SmallDisk disk(home, 320 << 10);
  if (!disk.mounted()) GTEST_SKIP() << "mounting a small tmpfs needs root: " << disk.why();

  constexpr int kPages = 150;
  std::string turns;
  for (int p = 1; p <= kPages; ++p) {
    turns += "{\"toolCalls\": [{\"name\": \"fetch_report\", \"arguments\": {\"page\": " +
             std::to_string(p % 12 + 1) + "}}]},";
  }
  std::ofstream(dir / "s.json") << "{\"turns\": [" << turns << "{\"answer\": \"done\"}]}";
  std::ofstream(dir / "app.toml")
      << "[agent]\nname = \"reader\"\nprompt = \"read\"\nmaxTurns = 200\n\n[model]\n"
      << "kind = \"scripted\"\nscript = \"s.json\"\n\n[[tools]]\nname = \"fetch_report\"\n"
      << "command = [\"" << kTools << "/fetch_report\"]\n\n[execution.claimCheck]\n"
      << "toolIds = [\"fetch_report\"]\n";
  std::string witness = dir / "witness.txt";
  std::vector<std::string> env = {"LOOM_TOOL_WITNESS=" + witness};

  Outcome run = runLoom({"--home", home, "run", dir / "app.toml", "--id", "r", "--json"}, dir, env);
  ASSERT_EQ(run.exitCode, 1) << "the disk did not fill: " << run.out;
  EXPECT_NE(run.error().find("the disk holding it is full: free disk space"), std::string::npos)
      << run.out << run.err;
  EXPECT_NE(run.error().find("`loom resume r` continues it"), std::string::npos)
      << run.out << run.err;
  std::size_t ran = readLines(witness).size();
  ASSERT_GT(ran, 1u) << "some turns were recorded before the disk filled";
  ASSERT_LT(ran, static_cast<std::size_t>(kPages));

  ASSERT_TRUE(disk.grow(16 << 20)) << std::strerror(errno);
  Outcome log = runLoom({"--home", home, "log", "r", "--json"}, dir);
  ASSERT_EQ(log.exitCode, 0) << log.err;
  EXPECT_EQ(log.out.find("STEP_FAILED"), std::string::npos) << "a full disk failed a step";
  EXPECT_EQ(log.out.find("EXECUTION_FAILED"), std::string::npos) << "a full disk failed the run";
  Outcome done = runLoom({"--home", home, "resume", "r", "--json"}, dir, env);
  ASSERT_EQ(done.exitCode, 0) << done.err;
  EXPECT_EQ(done.json().at("status"), "completed") << done.out;
  std::size_t total = readLines(witness).size();
  EXPECT_GE(total, static_cast<std::size_t>(kPages));
  EXPECT_LE(total, static_cast<std::size_t>(kPages) + 1)
      << "a recorded call ran again: only the one in flight when the disk filled may";
  Outcome state = runLoom({"--home", home, "state", "r", "--json"}, dir);
  ASSERT_EQ(state.exitCode, 0) << state.err;
}

// Fills the disk at `folder`: a file of zeros grows until the disk refuses more.
void fill(const std::string& folder) {
  std::ofstream filler(folder + "/filler", std::ios::binary);
  std::string block(4096, '\0');
  while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) && filler.flush()) {
  }
}

// A disk that is full before a command opens the home: even a read needs SQLite's
// shared-memory file, so the command refuses, saying the disk is full (not "disk I/O error"),
// and works again once there is room. A home holding keys opens too (its key store's
// best-effort checkpoint at open does not refuse).
TEST(ContentStoreFull, ACommandOnAFullDiskSaysTheDiskIsFull) {
  TempDir dir;
  std::string home = dir / "home";
  SmallDisk disk(home, 8 << 20);
  if (!disk.mounted()) GTEST_SKIP() << "mounting a small tmpfs needs root: " << disk.why();
  const std::string app = std::string(LOOM_SOURCE_DIR) + "/examples/agents/compliance.toml";
  std::vector<std::string> env{"LOOM_MASTER_KEY=" + std::string(64, 'a')};
  Outcome run = runLoom({"--home", home, "run", app, "--subject", "alice", "--id", "a1"}, dir, env);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  fill(home);
  Outcome ls = runLoom({"--home", home, "ls", "--config", app}, dir, env);
  EXPECT_EQ(ls.exitCode, 1) << ls.out;
  EXPECT_NE(ls.err.find("the disk holding it is full: free disk space"), std::string::npos)
      << ls.err;
  std::filesystem::remove(home + "/filler");
  Outcome again = runLoom({"--home", home, "ls", "--config", app}, dir, env);
  EXPECT_EQ(again.exitCode, 0) << again.err;
  EXPECT_NE(again.out.find("a1"), std::string::npos) << again.out;
}

// An export that does not fit where it is written leaves nothing there (no partial file) and
// says the disk is full; with room, the same command writes it whole.
TEST(ContentStoreFull, AnExportThatDoesNotFitLeavesNoPartialFile) {
  TempDir dir;
  std::string home = dir / "home";
  std::string out = dir / "out";
  SmallDisk disk(out, 4 << 10);
  if (!disk.mounted()) GTEST_SKIP() << "mounting a small tmpfs needs root: " << disk.why();
  const std::string app = std::string(LOOM_SOURCE_DIR) + "/examples/agents/compliance.toml";
  std::vector<std::string> env{"LOOM_MASTER_KEY=" + std::string(64, 'a')};
  ASSERT_EQ(
      runLoom({"--home", home, "run", app, "--subject", "alice", "--id", "a1"}, dir, env).exitCode,
      0);
  std::vector<std::string> exportArgs{"--home",   home, "export", "alice",
                                      "--config", app,  "-o",     out + "/alice.json"};
  Outcome full = runLoom(exportArgs, dir, env);
  ASSERT_EQ(full.exitCode, 1) << "the export fit in 4 KiB: " << full.out;
  EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;
  EXPECT_NE(full.err.find("free disk space"), std::string::npos) << full.err;
  EXPECT_TRUE(std::filesystem::is_empty(out)) << "a partial export was left behind";
  ASSERT_TRUE(disk.grow(16 << 20)) << std::strerror(errno);
  Outcome done = runLoom(exportArgs, dir, env);
  ASSERT_EQ(done.exitCode, 0) << done.err;
  json::value doc = json::parse(fileText(out + "/alice.json"), "export");
  EXPECT_EQ(doc.at("format").as_string(), "loom.export/1");
}

}  // namespace
}  // namespace loom::testing
