// `loom erase`, `loom export` and `loom keys new-master` end to end on
// examples/agents/compliance.toml: two subjects, one exported then erased; the other intact;
// no plaintext of the erased subject's own data left in the home; a wrong master key stops
// boot with a clear error.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

const std::string kApp = std::string(LOOM_SOURCE_DIR) + "/examples/agents/compliance.toml";

std::string masterKey(const TempDir& dir) {
  Outcome o = runLoom({"keys", "new-master"}, dir);
  EXPECT_EQ(o.exitCode, 0);
  std::string key = o.out.substr(0, o.out.find('\n'));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  return key;
}

// A home of its own with a fresh master key; loom(args) runs the CLI on it.
class ComplianceCli : public ::testing::Test {
 protected:
  Outcome loom(std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home});
    return runLoom(args, dir, env);
  }
  TempDir dir;
  std::string home = dir / "home";
  std::vector<std::string> env{"LOOM_MASTER_KEY=" + masterKey(dir)};
};

// A key file inside the home (mode 600, readable) would travel with every copy and backup of
// the data it seals: refused before anything is written, naming the file and where to put it.
TEST_F(ComplianceCli, AMasterKeyFileInsideTheHomeIsRefused) {
  std::filesystem::create_directories(home);
  std::string key = home + "/master.key";
  {
    std::ofstream out(key);
    out << masterKey(dir) << "\n";
  }
  std::filesystem::permissions(
      key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::string config = dir / "keys.toml";
  std::ofstream(config) << "[security.keys]\nfile = \"" << key << "\"\n\n[compliance.erase]\n";
  Outcome refused = loom({"run", "example.steps", "--config", config, "--subject", "alice",
                          "--input", R"({"steps": 1, "sleepMs": 0})"});
  EXPECT_EQ(refused.exitCode, 1) << refused.out;
  EXPECT_NE(refused.err.find("security.keys.file: " + key + " lies inside the home"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(home + "/loom.db")) << "nothing was written";
  std::filesystem::rename(key, dir / "master.key");  // moved out, as the message says
  std::ofstream(config) << "[security.keys]\nfile = \"" << dir / "master.key"
                        << "\"\n\n[compliance.erase]\n";
  EXPECT_EQ(loom({"run", "example.steps", "--config", config, "--subject", "alice", "--input",
                  R"({"steps": 1, "sleepMs": 0})"})
                .exitCode,
            0);
}

TEST_F(ComplianceCli, ExportThenEraseOneSubjectAndTheOtherStaysIntact) {
  ASSERT_EQ(
      loom({"run", kApp, "--subject", "alice", "--id", "a1", "--prompt", "alice-secret-prompt"})
          .exitCode,
      0);
  ASSERT_EQ(loom({"run", kApp, "--subject", "bob", "--id", "b1", "--prompt", "bob-secret-prompt"})
                .exitCode,
            0);
  EXPECT_FALSE(folderContains(home, "alice-secret-prompt")) << "sealed at rest";

  std::string exported = dir / "alice.json";
  ASSERT_EQ(loom({"export", "alice", "--config", kApp, "-o", exported}).exitCode, 0);
  std::ifstream in(exported);
  json::value doc = json::parse(std::string((std::istreambuf_iterator<char>(in)), {}), "export");
  EXPECT_EQ(doc.at("format").as_string(), "loom.export/1");
  EXPECT_EQ(doc.at("executions").as_array().size(), 1u);
  EXPECT_NE(json::toText(doc).find("alice-secret-prompt"), std::string::npos);
  ASSERT_FALSE(doc.at("claimChecked").as_array().empty());
  EXPECT_TRUE(doc.at("claimChecked").as_array()[0].as_object().contains("value"));
  Outcome misspelt = loom({"export", "alcie", "--config", kApp});
  ASSERT_EQ(misspelt.exitCode, 0) << misspelt.err;  // "nothing held" is an answer...
  EXPECT_NE(misspelt.err.find("no live or archived run and no blob names subject 'alcie'"),
            std::string::npos)
      << misspelt.err;  // ...said aloud, so a typo is not taken for it
  EXPECT_EQ(loom({"export", "alice", "--config", kApp}).err, "");

  Outcome erase = loom({"erase", "alice", "--config", kApp, "--json"});
  ASSERT_EQ(erase.exitCode, 0) << erase.err;
  EXPECT_TRUE(erase.json().at("shredded").as_bool());
  for (int again = 0; again < 2; ++again) {  // a repeat reports what the first one did
    Outcome repeat = loom({"erase", "alice", "--config", kApp, "--json"});
    ASSERT_EQ(repeat.exitCode, 0) << repeat.err;
    EXPECT_EQ(repeat.out, erase.out);
  }
  Outcome log = loom({"log", "a1", "--config", kApp, "--json"});
  ASSERT_EQ(log.exitCode, 0) << log.err;
  EXPECT_NE(log.out.find(R"("erased":{"subject":"alice"})"), std::string::npos) << log.out;
  Outcome bob = loom({"log", "b1", "--config", kApp, "--json"});
  EXPECT_NE(bob.out.find("bob-secret-prompt"), std::string::npos) << "bob is intact";
  EXPECT_EQ(loom({"ls"}).exitCode, 0) << "ls works after a shred";
  EXPECT_FALSE(folderContains(home, "alice-secret-prompt"));
}

// A subject or an id that is not UTF-8 would land in JSON rows Loom cannot read back, making
// the control log or the run list unreadable for every later erase, sweep and retention: it is
// refused before anything is written, and the home goes on working.
// The blob files of the home's filesystem content store (names of 64 hex digits).
std::vector<std::filesystem::path> blobFiles(const std::string& home) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(home + "/blobs")) {
    if (e.is_regular_file() && e.path().parent_path().filename().string().size() == 2) {
      out.push_back(e.path());  // in a shard folder
    }
  }
  return out;
}

// A blob whose date is ahead of the store's clock (copied from a machine whose clock ran
// ahead) is spared like one put during the erasure, but the report says which wait and why,
// and a repeat once the dates are right deletes them.
TEST_F(ComplianceCli, BlobsDatedAheadOfTheStoresClockAreNamedAndARepeatDeletesThemLater) {
  // The compliance example's fetch_report, each result a blob file (packBelowBytes = 0).
  const std::string examples = std::string(LOOM_SOURCE_DIR) + "/examples/agents";
  std::string script = dir / "script.json", app = dir / "files.toml";
  std::ofstream(script) << R"({"turns": [{"toolCalls": [{"name": "fetch_report", )"
                        << R"("arguments": {"page": 1}}]}, {"answer": "ok"}]})";
  std::ofstream(app) << "[agent]\nname = \"c\"\nprompt = \"read\"\nmaxTurns = 5\n\n"
                     << "[model]\nkind = \"scripted\"\nscript = \"" << script << "\"\n\n"
                     << "[[tools]]\nname = \"fetch_report\"\ndescription = \"page\"\n"
                     << "command = [\"" << examples << "/tools/fetch_report\"]\n\n"
                     << "[execution.claimCheck]\ntoolIds = [\"fetch_report\"]\n\n"
                     << "[security.keys]\nenv = \"LOOM_MASTER_KEY\"\n\n[compliance.erase]\n\n"
                     << "[storage.contentStore]\npackBelowBytes = 0\n";
  Outcome ran = loom({"run", app, "--subject", "alice", "--id", "a1"});
  ASSERT_EQ(ran.exitCode, 0) << ran.err;
  std::vector<std::filesystem::path> blobs = blobFiles(home);
  ASSERT_FALSE(blobs.empty());
  auto ahead = std::filesystem::file_time_type::clock::now() + std::chrono::hours(48);
  for (const auto& b : blobs) std::filesystem::last_write_time(b, ahead);

  Outcome erase = loom({"erase", "alice", "--config", app, "--json"});
  ASSERT_EQ(erase.exitCode, 0) << erase.err;
  json::value doc = erase.json();
  const json::value& content = doc.at("contentDeleted");
  EXPECT_EQ(content.at("deleted"), 0) << erase.out;
  EXPECT_EQ(content.at("retained").as_int64(), static_cast<int64_t>(blobs.size())) << erase.out;
  EXPECT_EQ(content.at("datedAhead"), content.at("retained")) << erase.out;
  EXPECT_TRUE(content.at("datedAheadUntil").is_string()) << erase.out;
  for (const auto& b : blobs) EXPECT_TRUE(std::filesystem::exists(b)) << "kept: " << b;

  for (const auto& b : blobs) {
    std::filesystem::last_write_time(
        b, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  }
  Outcome again = loom({"erase", "alice", "--config", app});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_NE(again.out.find(std::to_string(blobs.size()) + " deleted"), std::string::npos)
      << again.out;
  for (const auto& b : blobs) EXPECT_FALSE(std::filesystem::exists(b)) << "left: " << b;
}

TEST_F(ComplianceCli, ASubjectOrIdThatIsNotUtf8IsRefusedAndTheHomeKeepsWorking) {
  ASSERT_EQ(loom({"run", kApp, "--subject", "alice", "--id", "a1"}).exitCode, 0);
  // Erasing one is allowed (an old home may hold it, ADR 0025): the journal names it in hex.
  Outcome odd = loom({"erase", "\xff", "--config", kApp, "--json"});
  ASSERT_EQ(odd.exitCode, 0) << odd.err;
  EXPECT_EQ(odd.json().at("subject"), "\\xff") << odd.out;
  EXPECT_EQ(odd.json().at("subjectHex"), "ff") << odd.out;
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"export", "\xff\xfe", "--config", kApp},
                                             {"run", kApp, "--subject", "\xff\xfe", "--id", "b1"},
                                             {"run", kApp, "--subject", "bob", "--id", "id\xff"}}) {
    Outcome refused = loom(args);
    EXPECT_NE(refused.exitCode, 0) << args[0] << ": " << refused.out;
    EXPECT_NE(refused.err.find("not valid UTF-8"), std::string::npos) << refused.err;
  }
  Outcome ls = loom({"ls", "--json"});
  ASSERT_EQ(ls.exitCode, 0) << ls.err;
  EXPECT_EQ(ls.out.find("b1"), std::string::npos) << ls.out;
  Outcome erase = loom({"erase", "alice", "--config", kApp, "--json"});
  ASSERT_EQ(erase.exitCode, 0) << erase.err;
  EXPECT_EQ(loom({"sweep"}).exitCode, 0);
}

// A home from a build before the UTF-8 check, whose run's subject is the bytes "zz\xff" (its
// rows from before row checksums too): its runs read, and the subject is erased by its hex,
// blobs and all, with a report and a journal in UTF-8.
TEST_F(ComplianceCli, AnOldHomesSubjectThatIsNotUtf8IsErasedByItsHex) {
  const std::string examples = std::string(LOOM_SOURCE_DIR) + "/examples/agents";
  std::string script = dir / "script.json", app = dir / "old.toml", keyed = dir / "keyed.toml";
  std::ofstream(script) << R"({"turns": [{"toolCalls": [{"name": "fetch_report", )"
                        << R"("arguments": {"page": 2}}]}, {"answer": "ok"}]})";
  std::string body =
      "[agent]\nname = \"c\"\nprompt = \"read\"\nmaxTurns = 5\n\n"
      "[model]\nkind = \"scripted\"\nscript = \"" +
      script +
      "\"\n\n"
      "[[tools]]\nname = \"fetch_report\"\ndescription = \"page\"\n"
      "command = [\"" +
      examples +
      "/tools/fetch_report\"]\n\n"
      "[execution.claimCheck]\ntoolIds = [\"fetch_report\"]\n\n"
      "[storage.contentStore]\npackBelowBytes = 0\n\n";
  std::ofstream(app) << body;  // the old home had no keys: nothing sealed
  std::ofstream(keyed) << body << "[security.keys]\nenv = \"LOOM_MASTER_KEY\"\n\n"
                       << "[compliance.erase]\n";
  Outcome ran = runLoom({"--home", home, "run", app, "--subject", "zzsubj", "--id", "old1"}, dir);
  ASSERT_EQ(ran.exitCode, 0) << ran.err;
  std::vector<std::filesystem::path> blobs = blobFiles(home);
  ASSERT_FALSE(blobs.empty());
  std::string sql =
      "UPDATE events SET body = replace(body, '\"zzsubj\"', '\"zz' || CAST(X'FF' AS TEXT) || "
      "'\"'), checksum = NULL WHERE execution_id = 'old1'; UPDATE executions SET subject = "
      "'zz' || CAST(X'FF' AS TEXT) WHERE id = 'old1';";
  ASSERT_EQ(std::system(("sqlite3 " + home + "/loom.db \"" + sql + "\"").c_str()), 0);

  Outcome log = loom({"log", "old1"});
  EXPECT_EQ(log.exitCode, 0) << "an old row reads as the bytes it holds: " << log.err;
  Outcome erase = loom({"erase", "--subject-hex", "7a7aff", "--config", keyed, "--json"});
  ASSERT_EQ(erase.exitCode, 0) << erase.err;
  json::value doc = erase.json();  // valid UTF-8 JSON
  EXPECT_EQ(doc.at("subject"), "zz\\xff") << erase.out;
  EXPECT_EQ(doc.at("subjectHex"), "7a7aff") << erase.out;
  EXPECT_EQ(doc.at("contentDeleted").at("deleted").as_int64(), static_cast<int64_t>(blobs.size()))
      << erase.out;
  for (const auto& b : blobs) EXPECT_FALSE(std::filesystem::exists(b)) << "left: " << b;
  Outcome text = loom({"erase", "zz\xff", "--config", keyed});  // the raw bytes name it too
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("erased subject 'zz\\xff'"), std::string::npos) << text.out;
  EXPECT_EQ(loom({"sweep"}).exitCode, 0) << "the journal and the old rows read";
  Outcome bad = loom({"erase", "--subject-hex", "7a7", "--config", keyed});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_NE(bad.err.find("is not hex"), std::string::npos) << bad.err;
}

TEST(ComplianceCliKeys, AWrongMasterKeyStopsBootAndEraseNeedsKeys) {
  TempDir dir;
  std::string home = dir / "home";
  ASSERT_EQ(runLoom({"--home", home, "run", kApp, "--subject", "a", "--id", "x"}, dir,
                    {"LOOM_MASTER_KEY=" + masterKey(dir)})
                .exitCode,
            0);
  Outcome wrong = runLoom({"--home", home, "log", "x", "--config", kApp}, dir,
                          {"LOOM_MASTER_KEY=" + masterKey(dir)});
  EXPECT_EQ(wrong.exitCode, 1);
  EXPECT_NE(wrong.err.find("LOOM_MASTER_KEY"), std::string::npos) << wrong.err;
  Outcome missing =
      runLoom({"--home", home, "run", kApp, "--subject", "a"}, dir, {"LOOM_MASTER_KEY="});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("LOOM_MASTER_KEY"), std::string::npos) << missing.err;
  Outcome noKeys = runLoom({"--home", home, "erase", "a"}, dir);
  EXPECT_EQ(noKeys.exitCode, 1);
  EXPECT_NE(noKeys.err.find("security.keys"), std::string::npos) << noKeys.err;
}

// After one sealed run, the home records its keys; commands that write nothing sealed must
// not need them (a new shell without LOOM_MASTER_KEY ran nothing at all before).
TEST(ComplianceCliKeys, OnlyWhatIsSealedNeedsTheMasterKey) {
  TempDir dir;
  std::string home = dir / "home";
  std::vector<std::string> withKey{"LOOM_MASTER_KEY=" + masterKey(dir)};
  ASSERT_EQ(
      runLoom({"--home", home, "run", kApp, "--subject", "alice", "--id", "sealed"}, dir, withKey)
          .exitCode,
      0);
  ASSERT_EQ(
      runLoom({"--home", home, "run", "example.approval", "--id", "old"}, dir, withKey).exitCode,
      0);
  ASSERT_EQ(std::getenv("LOOM_MASTER_KEY"), nullptr) << "the tests run without a key set";
  auto loom = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--home", home});
    return runLoom(args, dir);  // a new shell: no key
  };
  Outcome steps = loom({"run", "example.steps", "--input", R"({"steps": 1})", "--json"});
  EXPECT_EQ(steps.exitCode, 0) << steps.out << steps.err;
  EXPECT_EQ(steps.json().at("status"), "completed") << steps.out;
  Outcome submitted =
      loom({"run", "example.steps", "--submit", "--id", "later", "--input", R"({"steps": 1})"});
  EXPECT_EQ(submitted.exitCode, 0) << submitted.err;
  Outcome resumed = loom({"resume", "later", "--json"});
  EXPECT_EQ(resumed.exitCode, 0) << resumed.err;
  Outcome signalled = loom({"signal", "old", "approve", R"({"ok": true})", "--json"});
  EXPECT_EQ(signalled.exitCode, 0) << signalled.err;
  ASSERT_EQ(
      runLoom({"--home", home, "run", "example.approval", "--id", "old2"}, dir, withKey).exitCode,
      0);
  Outcome cancelled = loom({"cancel", "old2"});
  EXPECT_EQ(cancelled.exitCode, 0) << cancelled.err;

  Outcome subject = loom({"run", "example.steps", "--subject", "bob"});
  EXPECT_EQ(subject.exitCode, 1);
  EXPECT_NE(subject.err.find("the new run is sealed under subject 'bob' (compliance.erase), so "
                             "this command needs the master key: the environment variable "
                             "LOOM_MASTER_KEY (security.keys.env) is not set"),
            std::string::npos)
      << subject.err;
  Outcome sealedRun = loom({"cancel", "sealed"});
  EXPECT_EQ(sealedRun.exitCode, 1);
  EXPECT_NE(sealedRun.err.find("execution 'sealed' is sealed (event 1, subject 'alice')"),
            std::string::npos)
      << sealedRun.err;
  EXPECT_EQ(sealedRun.err.find("LOOM_MASTER_KEY", sealedRun.err.find("LOOM_MASTER_KEY") + 1),
            std::string::npos)
      << "the key's variable is named once: " << sealedRun.err;

  // --json: one value, the error, never a half array of events before it.
  Outcome log = loom({"log", "sealed", "--json"});
  EXPECT_EQ(log.exitCode, 1);
  EXPECT_NE(log.error().find("is sealed"), std::string::npos) << log.out;
  // A worker says why it could not run a sealed run, and leaves it as it was.
  ASSERT_EQ(runLoom({"--home", home, "run", "example.steps", "--subject", "carol", "--submit",
                     "--id", "c1", "--input", R"({"steps": 1})"},
                    dir, withKey)
                .exitCode,
            0);
  Outcome worker = loom({"worker", "--once"});
  EXPECT_NE(worker.out.find("worker: c1: could not start: "), std::string::npos) << worker.out;
  EXPECT_EQ(worker.exitCode, 1) << worker.out;
  EXPECT_NE(worker.out.find("subject 'carol'"), std::string::npos) << worker.out;
  // An emergency stop is not blocked by sealed runs it cannot read: unknown, so --force.
  Outcome kill = loom({"kill", "fetch_report"});
  EXPECT_EQ(kill.exitCode, 2) << kill.err;
  EXPECT_NE(kill.err.find("--force"), std::string::npos) << kill.err;
  EXPECT_EQ(loom({"kill", "fetch_report", "--force"}).exitCode, 0);
  // A subject's run under a file that does not seal is refused in a home that seals them.
  Outcome clear = runLoom({"--home", home, "run", LOOM_SOURCE_DIR "/examples/agents/research.toml",
                           "--subject", "dave"},
                          dir, withKey);
  EXPECT_EQ(clear.exitCode, 1);
  EXPECT_NE(clear.err.find("its events would be written in clear"), std::string::npos) << clear.err;
}

}  // namespace
}  // namespace loom::testing
