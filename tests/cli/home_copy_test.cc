// A home copied, restored elsewhere, moved, or sharing its content store with another home,
// tried with the real `loom` binary (issue: nothing lost whatever an operator does to a home).
// A tool result is written as a blob file (packBelowBytes = 0), so the sweep of a copy that
// walked the original's folder would delete the original's files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

const std::string kExamples = std::string(LOOM_SOURCE_DIR) + "/examples/agents";

// The blob files of a filesystem store (two-hex-digit shard folders), sorted.
std::vector<std::string> blobFiles(const std::filesystem::path& store) {
  std::vector<std::string> files;
  if (!std::filesystem::exists(store)) return files;
  for (const auto& f : std::filesystem::recursive_directory_iterator(store)) {
    if (f.is_regular_file() && f.path().parent_path().filename().string().size() == 2) {
      files.push_back(f.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void shell(const std::string& command) {
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

class HomeCopyCli : public ::testing::Test {
 protected:
  // An agent app whose one tool call (page `page`) offloads a blob file; `store` lines are
  // added to [storage.contentStore].
  std::string app(int page, const std::string& store = "") {
    std::string script = dir_ / ("s" + std::to_string(page) + ".json");
    std::ofstream(script) << "{\"turns\": [{\"toolCalls\": [{\"name\": \"fetch_report\", "
                          << "\"arguments\": {\"page\": " << page << "}}]}, {\"answer\": \"ok\"}]}";
    std::string path = dir_ / ("a" + std::to_string(page) + std::to_string(store.size()) + ".toml");
    std::ofstream(path) << "[agent]\nname = \"c\"\nprompt = \"read\"\nmaxTurns = 5\n\n"
                        << "[model]\nkind = \"scripted\"\nscript = \"" << script << "\"\n\n"
                        << "[[tools]]\nname = \"fetch_report\"\ndescription = \"page\"\n"
                        << "command = [\"" << kExamples << "/tools/fetch_report\"]\n\n"
                        << "[execution.claimCheck]\ntoolIds = [\"fetch_report\"]\n\n"
                        << "[security.keys]\nenv = \"LOOM_MASTER_KEY\"\n\n[compliance.erase]\n\n"
                        << "[storage.contentStore]\n"
                        << (store.find("sqlite") == std::string::npos ? "packBelowBytes = 0\n" : "")
                        << store;
    return path;
  }
  Outcome loom(const std::string& home, std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home});
    return runLoom(args, dir_, env_);
  }
  void run(const std::string& home, const std::string& app, const std::string& id) {
    Outcome o = loom(home, {"run", app, "--subject", "alice", "--id", id});
    ASSERT_EQ(o.exitCode, 0) << o.err;
  }
  std::string row(const std::string& home, const std::string& name) {
    std::string out = dir_ / "row.txt";
    shell("sqlite3 " + home + "/loom.db \"SELECT value FROM home_record WHERE name = '" + name +
          "'\" > " + out);
    return fileText(out);
  }
  // Makes the home's rows name its store by its absolute path, as builds before relative
  // paths wrote them.
  void makeRowsAbsolute(const std::string& home) {
    shell("sqlite3 " + home + "/loom.db \"UPDATE home_record SET value = json_set(value, "
          "'$.path', '" + home + "/blobs') WHERE name LIKE 'contentStore%'\"");
  }

  TempDir dir_;
  std::string home_ = dir_ / "home";
  std::string copy_ = dir_ / "copy";
  std::vector<std::string> env_{"LOOM_MASTER_KEY=" + std::string(64, 'a')};
};

TEST_F(HomeCopyCli, ACopiedHomeSweepsItsOwnCopyOfTheStore) {
  run(home_, app(1), "r1");
  EXPECT_NE(row(home_, "contentStore").find("\"path\":\"blobs\""), std::string::npos)
      << "a store inside the home is recorded relative to it";
  shell("cp -a " + home_ + " " + copy_);
  run(home_, app(2), "r2");  // a blob made after the copy: only the original cites it
  std::vector<std::string> before = blobFiles(home_ + "/blobs");
  ASSERT_EQ(before.size(), 2u);
  Outcome swept = loom(copy_, {"sweep", "--grace-hours", "0", "--ttl-days", "0"});
  ASSERT_EQ(swept.exitCode, 0) << swept.err;
  EXPECT_EQ(blobFiles(home_ + "/blobs"), before) << "the copy's sweep touched the original";
  Outcome doctor = loom(copy_, {"doctor", "--json"});
  ASSERT_EQ(doctor.exitCode, 0) << doctor.out;
  EXPECT_EQ(doctor.json().at("contentStore").at("path").as_string(), copy_ + "/blobs");
}

TEST_F(HomeCopyCli, ACopyOfAHomeRecordedWithAbsolutePathsUsesItsOwnStore) {
  run(home_, app(1), "r1");
  makeRowsAbsolute(home_);
  shell("cp -a " + home_ + " " + copy_);  // a backup restored to another folder
  run(home_, app(2), "r2");
  std::vector<std::string> before = blobFiles(home_ + "/blobs");
  Outcome swept = loom(copy_, {"sweep", "--grace-hours", "0", "--ttl-days", "0"});
  ASSERT_EQ(swept.exitCode, 0) << swept.err;
  EXPECT_EQ(blobFiles(home_ + "/blobs"), before);
  EXPECT_NE(row(copy_, "contentStore").find("\"path\":\"blobs\""), std::string::npos)
      << "the copy's row is rewritten relative: " << row(copy_, "contentStore");
  // The original keeps its own, its row rewritten too.
  ASSERT_EQ(loom(home_, {"sweep", "--grace-hours", "0"}).exitCode, 0);
  EXPECT_NE(row(home_, "contentStore").find("\"path\":\"blobs\""), std::string::npos);

  // A moved home (the original gone) finds its own store the same way.
  std::string moved = dir_ / "moved";
  makeRowsAbsolute(home_);
  shell("mv " + home_ + " " + moved);
  Outcome resumed = loom(moved, {"sweep", "--grace-hours", "0", "--ttl-days", "0"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(blobFiles(moved + "/blobs"), before);
}

// Only loom.db copied (or a row naming the original's store that cannot be proven a copy):
// the copy reads, but every deleting command refuses, naming the other home.
TEST_F(HomeCopyCli, AHomeWhoseStoreLiesInAnotherHomeRefusesToDelete) {
  run(home_, app(1), "r1");
  makeRowsAbsolute(home_);
  std::filesystem::create_directories(copy_);
  shell("cp -a " + home_ + "/loom.db " + copy_ + "/");
  run(home_, app(2), "r2");
  std::vector<std::string> before = blobFiles(home_ + "/blobs");
  std::string retention = dir_ / "retention.toml";
  std::ofstream(retention) << "[storage.retention]\nafterDays = 0\n";
  for (std::vector<std::string> command :
       {std::vector<std::string>{"sweep", "--grace-hours", "0", "--ttl-days", "0"},
        {"erase", "alice"},
        {"retention", "run", "--config", retention}}) {
    Outcome refused = loom(copy_, command);
    EXPECT_EQ(refused.exitCode, 1) << command[0] << ": " << refused.out;
    EXPECT_NE(refused.err.find("is also the content store of the home " + home_),
              std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("storage.contentStore.shared"), std::string::npos);
  }
  EXPECT_EQ(blobFiles(home_ + "/blobs"), before);
  Outcome log = loom(copy_, {"state", "r1"});
  EXPECT_EQ(log.exitCode, 0) << log.err << " (reading stays open)";
  Outcome doctor = loom(copy_, {"doctor"});
  EXPECT_EQ(doctor.exitCode, 1);
  EXPECT_NE(doctor.out.find("other home     " + home_ + " (the store lies in its folder)"),
            std::string::npos)
      << doctor.out;
}

// Another home's store reached through a link (the second home's blobs folder links to the
// first's): the store lies in the first home's folder once the link is resolved, so the second
// home refuses to delete from it.
TEST_F(HomeCopyCli, AStoreReachedThroughALinkIsTheHomeItLiesIn) {
  run(home_, app(1), "r1");
  std::filesystem::create_directories(copy_);
  std::filesystem::create_directory_symlink(home_ + "/blobs", copy_ + "/blobs");
  run(copy_, app(2), "c1");
  std::vector<std::string> before = blobFiles(home_ + "/blobs");
  ASSERT_EQ(before.size(), 2u);
  Outcome refused = loom(copy_, {"sweep", "--grace-hours", "0", "--ttl-days", "0"});
  EXPECT_EQ(refused.exitCode, 1) << refused.out;
  EXPECT_NE(refused.err.find("is also the content store of the home " + home_), std::string::npos)
      << refused.err;
  EXPECT_EQ(blobFiles(home_ + "/blobs"), before);
}

// A store outside both homes: the copy finds the original's claim. Declared shared, each
// home's sweep spares what the other cites; a moved home's old claim holds every delete back
// until it is released.
TEST_F(HomeCopyCli, AStoreOutsideTheHomeIsClaimedAndCanBeShared) {
  std::string store = dir_ / "store";
  std::string path = "path = \"" + store + "\"\n";
  run(home_, app(1, path), "r1");
  shell("cp -a " + home_ + " " + copy_);
  Outcome refused = loom(copy_, {"sweep", "--grace-hours", "0"});
  EXPECT_EQ(refused.exitCode, 1);
  EXPECT_NE(refused.err.find("its claim " + store + "/HOMES/"), std::string::npos) << refused.err;
  // The copy claimed the store too: the original now refuses as well, rather than delete what
  // the copy's runs offload.
  EXPECT_EQ(loom(home_, {"sweep", "--grace-hours", "0"}).exitCode, 1);

  std::string shared = path + "shared = true\n";
  run(copy_, app(2, shared), "c2");  // only the copy cites this blob
  ASSERT_EQ(blobFiles(store).size(), 2u);
  Outcome swept = loom(home_, {"sweep", "--config", app(1, shared), "--grace-hours", "0",
                               "--ttl-days", "0", "--json"});
  ASSERT_EQ(swept.exitCode, 0) << swept.err;
  ASSERT_NE(swept.out.find("\"sharedHome\":1"), std::string::npos) << swept.out;
  EXPECT_EQ(blobFiles(store).size(), 2u);
  Outcome erased = loom(copy_, {"erase", "alice", "--json"});  // recorded shared: no --config
  ASSERT_EQ(erased.exitCode, 0) << erased.err;
  EXPECT_EQ(erased.json().at("contentDeleted").at("keptCitedElsewhere").as_array().size(), 1u)
      << "the original's run cites page 1: " << erased.out;
  EXPECT_EQ(blobFiles(store).size(), 1u) << "only the copy's page 2 is erased";

  std::string moved = dir_ / "moved";
  shell("mv " + copy_ + " " + moved);
  Outcome gone = loom(home_, {"sweep", "--grace-hours", "0"});
  EXPECT_EQ(gone.exitCode, 1);
  EXPECT_NE(gone.err.find("loom doctor --forget-home " + copy_), std::string::npos) << gone.err;
  ASSERT_EQ(loom(moved, {"state", "c2"}).exitCode, 0);
  Outcome kept = loom(home_, {"doctor", "--forget-home", home_});
  EXPECT_EQ(kept.exitCode, 1) << "a home still there keeps its claim";
  ASSERT_EQ(loom(home_, {"doctor", "--forget-home", copy_}).exitCode, 0);
  EXPECT_EQ(loom(home_, {"sweep", "--grace-hours", "0"}).exitCode, 0);
}

// A SQLite store names itself (table loom_store) as a filesystem store does (STORE_ID):
// another home's SQLite file put in its place is refused before anything is deleted.
TEST_F(HomeCopyCli, AnotherSqliteStorePutInPlaceIsRefused) {
  std::string mine = dir_ / "mine.db", theirs = dir_ / "theirs.db";
  run(home_, app(1, "kind = \"sqlite\"\npath = \"" + mine + "\"\n"), "r1");
  run(copy_, app(2, "kind = \"sqlite\"\npath = \"" + theirs + "\"\n"), "r2");
  std::filesystem::rename(mine, dir_ / "away.db");
  std::filesystem::copy_file(theirs, mine);
  for (std::vector<std::string> command :
       {std::vector<std::string>{"sweep", "--grace-hours", "0"}, {"erase", "alice"}}) {
    Outcome refused = loom(home_, command);
    EXPECT_EQ(refused.exitCode, 1) << command[0] << ": " << refused.out;
    EXPECT_NE(refused.err.find("is not the store the runs of"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("table loom_store in " + mine), std::string::npos) << refused.err;
  }
  std::filesystem::rename(dir_ / "away.db", mine);
  EXPECT_EQ(loom(home_, {"sweep", "--grace-hours", "0"}).exitCode, 0);
}

}  // namespace
}  // namespace loom::testing
