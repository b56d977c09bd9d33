#include "util/this_program.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "loom/util/error.h"

namespace loom {

std::string thisProgram(std::string_view who) {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    throw UnavailableError(std::string(who) + ": cannot find its own binary (/proc/self/exe)");
  }
  return path.string();
}

UniqueFd scratchFile(std::string_view who) {
  char path[] = "/tmp/loom-child-XXXXXX";
  int fd = ::mkostemp(path, O_CLOEXEC);  // never inherited by another child
  if (fd < 0) throw UnavailableError(std::string(who) + ": cannot create a scratch file in /tmp");
  ::unlink(path);
  return UniqueFd(fd);
}

std::string readBack(int fd, std::size_t limit) {
  std::string text;
  ::lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; text.size() < limit && (n = ::read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace loom
