// The home holds subjects' data in plain files: under the default umask
// (022) everything Loom creates there is its owner's alone, folders 0700 and files 0600, for a
// run, a sealed run with claim-checked blobs, a retention archive and a sweep.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "support/loom_process.h"

namespace loom::testing {
namespace {

const std::string kApp = std::string(LOOM_SOURCE_DIR) + "/examples/agents/compliance.toml";

class UmaskGuard {
 public:
  explicit UmaskGuard(mode_t mask) : old_(::umask(mask)) {}
  ~UmaskGuard() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST(HomePermissions, EverythingInTheHomeIsTheOwnersAloneWhateverTheUmask) {
  UmaskGuard umask(022);
  TempDir dir;
  std::string home = dir / "home";
  Outcome key = runLoom({"keys", "new-master"}, dir);
  std::vector<std::string> env{"LOOM_MASTER_KEY=" + key.out.substr(0, 64)};
  ASSERT_EQ(runLoom({"--home", home, "run", kApp, "--subject", "alice"}, dir, env).exitCode, 0);
  ASSERT_EQ(
      runLoom({"--home", home, "run", "example.steps", "--input", R"({"steps": 1})"}, dir, env)
          .exitCode,
      0);
  std::string retention = dir / "retention.toml";
  std::ofstream(retention) << "[storage.retention]\nafterDays = 0\n";
  Outcome retained = runLoom({"--home", home, "retention", "run", "--config", retention}, dir, env);
  ASSERT_EQ(retained.exitCode, 0) << retained.err;
  ASSERT_EQ(runLoom({"--home", home, "sweep", "--dry-run"}, dir, env).exitCode, 0);

  int files = 0;
  struct stat st {};
  ASSERT_EQ(::stat(home.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << home;
  for (const auto& f : std::filesystem::recursive_directory_iterator(home)) {
    ASSERT_EQ(::lstat(f.path().c_str(), &st), 0) << f.path();
    if (S_ISDIR(st.st_mode)) {
      EXPECT_EQ(st.st_mode & 0777, 0700u) << f.path();
    } else {
      ++files;
      EXPECT_EQ(st.st_mode & 077, 0u) << f.path() << " is readable by group or others";
    }
  }
  EXPECT_GE(files, 5) << "loom.db, its WAL, blobs, the archive segment";
}

}  // namespace
}  // namespace loom::testing
