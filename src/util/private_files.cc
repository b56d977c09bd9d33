#include "util/private_files.h"

#include <sys/stat.h>

#include <system_error>

#include "loom/util/error.h"

namespace loom {

void createPrivateDirectories(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && ::chmod(dir.c_str(), kPrivateDirectoryMode) != 0) {
    ec = std::error_code(errno, std::generic_category());
  }
  if (ec) {
    throw FailedPreconditionError("cannot create the private folder " + dir.string() + ": " +
                                  ec.message() +
                                  "; pass --home DIR (or set LOOM_HOME) to a folder you own");
  }
}

void restrictToOwner(const std::filesystem::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return;
  // Only Loom's own kinds of file: a path that leads to a device (/dev/null given as a store's
  // path, or a link to it) or a pipe is never Loom's to change, whoever runs it.
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return;
  if ((st.st_mode & 077) != 0) ::chmod(file.c_str(), st.st_mode & 0700 & ~S_IFMT);
}

}  // namespace loom
