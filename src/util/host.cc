#include "util/host.h"

#include <unistd.h>

namespace loom {

std::string hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

}  // namespace loom
