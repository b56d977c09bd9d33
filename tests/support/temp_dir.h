// The one temporary folder of Loom's tests and benchmarks: a fresh folder under the system
// temp dir (mkdtemp, so two processes never share one), removed with everything in it on
// destruction (best effort: a leftover folder fails nothing). Not thread-safe to destroy while
// in use.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace loom::testing {

class TempDir {
 public:
  // `prefix` names the folder (loom-<prefix>-XXXXXX) so a leftover one says who made it.
  explicit TempDir(std::string_view prefix = "test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // path() / name as a string, for the command lines and options that take one.
  std::string operator/(std::string_view name) const { return (path_ / name).string(); }
  // Writes `text` to path() / name (creating its folders), executable when asked; returns the
  // file's path. Throws std::runtime_error when it cannot.
  std::filesystem::path write(std::string_view name, std::string_view text,
                              bool executable = false) const;

 private:
  std::filesystem::path path_;
};

}  // namespace loom::testing
