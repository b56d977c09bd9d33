#include "util/posix_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "loom/util/error.h"
#include "support/temp_dir.h"
#include "util/private_files.h"

namespace loom::posix {
namespace {

TEST(PosixFile, ReadEntryListsAFolderToItsEnd) {
  loom::testing::TempDir dir;
  std::ofstream(dir.path() / "a") << "1";
  std::ofstream(dir.path() / "b") << "2";
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.path().c_str()), ::closedir);
  ASSERT_TRUE(d);
  std::set<std::string> names;
  while (dirent* e = readEntry(d.get(), dir.path())) names.insert(e->d_name);
  EXPECT_EQ(names, (std::set<std::string>{".", "..", "a", "b"}));
}

// readdir(3) returns null both at the end and on an error: the error must not read as the end.
TEST(PosixFile, AFolderThatCannotBeReadToItsEndThrowsInsteadOfEnding) {
  loom::testing::TempDir dir;
  std::ofstream(dir.path() / "a") << "1";
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.path().c_str()), ::closedir);
  ASSERT_TRUE(d);
  // Its descriptor now names a regular file: the next getdents(2) fails (ENOTDIR), as a
  // damaged folder's read (EIO, EUCLEAN) would.
  UniqueFd file(::open((dir.path() / "a").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_GE(::dup2(file.get(), ::dirfd(d.get())), 0);
  try {
    readEntry(d.get(), dir.path());
    FAIL() << "a failed read of the folder was taken for its end";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("read directory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
  }
}

TEST(PosixFile, PathExistsTellsAbsentFromCannotLook) {
  loom::testing::TempDir dir;
  std::ofstream(dir.path() / "a") << "1";
  EXPECT_TRUE(pathExists(dir.path() / "a"));
  EXPECT_FALSE(pathExists(dir.path() / "b"));
  EXPECT_FALSE(pathExists(dir.path() / "a" / "under-a-file"));   // ENOTDIR: not there either
  std::filesystem::create_symlink("loop", dir.path() / "loop");  // ELOOP: cannot tell
  EXPECT_THROW(pathExists(dir.path() / "loop"), Error);
}

// A path given to Loom that leads to a device or a pipe (a store's path set to /dev/null, or a
// link to it) keeps its mode: making it owner-only would break it for every other user.
TEST(PrivateFiles, RestrictToOwnerChangesOnlyRegularFilesAndFolders) {
  loom::testing::TempDir dir;
  auto mode = [](const std::filesystem::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 0777;
  };
  std::filesystem::path file = dir.path() / "file", pipe = dir.path() / "pipe";
  std::ofstream(file) << "1";
  ASSERT_EQ(::chmod(file.c_str(), 0644), 0);
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(pipe.c_str(), 0644), 0);
  std::filesystem::create_symlink(pipe, dir.path() / "link");
  restrictToOwner(pipe);
  restrictToOwner(dir.path() / "link");
  EXPECT_EQ(mode(pipe), 0644u);
  restrictToOwner(file);
  EXPECT_EQ(mode(file), 0600u);
}

}  // namespace
}  // namespace loom::posix
