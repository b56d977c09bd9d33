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

// The real call, unless the disk is failing.
int syncOrFail(const char* name, int fd) {
  if (failing()) {
    errno = EIO;
    return -1;
  }
  static SyncFn fsyncFn = reinterpret_cast<SyncFn>(dlsym(RTLD_NEXT, "fsync"));
  static SyncFn fdatasyncFn = reinterpret_cast<SyncFn>(dlsym(RTLD_NEXT, "fdatasync"));
  return (name[1] == 's' ? fsyncFn : fdatasyncFn)(fd);
}

}  // namespace

extern "C" {

int fsync(int fd) { return syncOrFail("fsync", fd); }

int fdatasync(int fd) { return syncOrFail("fdatasync", fd); }

}  // extern "C"
