// A disk whose flushes fail, for tests of the real `loom` binary (LD_PRELOAD): while the file
// named by LOOM_FAULT_FSYNC_WHILE exists, every fsync(2) and fdatasync(2) of the process fails
// with EIO, as a failing disk's would; once it is removed, they work again.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace {

bool failing() {
  const char* flag = getenv("LOOM_FAULT_FSYNC_WHILE");
  return flag != nullptr && access(flag, F_OK) == 0;
}

using SyncFn = int (*)(int);

}  // namespace

extern "C" {

int fsync(int fd) {
  static SyncFn real = reinterpret_cast<SyncFn>(dlsym(RTLD_NEXT, "fsync"));
  if (failing()) {
    errno = EIO;
    return -1;
  }
  return real(fd);
}

int fdatasync(int fd) {
  static SyncFn real = reinterpret_cast<SyncFn>(dlsym(RTLD_NEXT, "fdatasync"));
  if (failing()) {
    errno = EIO;
    return -1;
  }
  return real(fd);
}

}  // extern "C"
