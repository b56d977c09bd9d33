#include "support/sqlite_fault_vfs.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <new>
#include <stdexcept>

namespace loom::testing {
namespace {

struct Fault {
  SqliteFaultVfs::Call call = SqliteFaultVfs::Call::kWrite;
  std::string fileName;  // "" : none
  int rc = SQLITE_OK;
  int count = 0;
  int skip = 0;
  int failed = 0;
};

SqliteFaultVfs* gActive = nullptr;
sqlite3_vfs* gReal = nullptr;
sqlite3_vfs gShim{};
std::mutex gMu;  // SQLite calls the shim on any thread; a test sets faults on its own
Fault gFault;    // GUARDED_BY(gMu)

struct ShimFile {
  sqlite3_file base;
  sqlite3_file* real;  // allocated right after this struct
  std::string path;    // as SQLite opened it
  std::string name;    // without its folder
};

ShimFile* shim(sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f); }

// The injected result of this call, or SQLITE_OK to go on to the real file. The thread's errno
// says what the OS would have (SQLite reads it as the system error behind an I/O failure).
int injected(SqliteFaultVfs::Call call, const ShimFile* f) {
  std::lock_guard lock(gMu);
  if (gFault.fileName.empty() || gFault.call != call || gFault.fileName != f->name) {
    return SQLITE_OK;
  }
  if (gFault.skip > 0) {
    --gFault.skip;
    return SQLITE_OK;
  }
  if (gFault.count == 0) return SQLITE_OK;
  if (gFault.count > 0) --gFault.count;
  ++gFault.failed;
  errno = gFault.rc == SQLITE_FULL ? ENOSPC : EIO;
  return gFault.rc;
}

#define LOOM_FORWARD(m, ...) shim(f)->real->pMethods->m(shim(f)->real, __VA_ARGS__)

sqlite3_io_methods makeMethods() {
  sqlite3_io_methods m;
  std::memset(&m, 0, sizeof m);
  m.iVersion = 3;
  m.xClose = [](sqlite3_file* f) {
    int rc = shim(f)->real->pMethods->xClose(shim(f)->real);
    shim(f)->path.~basic_string();
    shim(f)->name.~basic_string();
    return rc;
  };
  m.xRead = [](sqlite3_file* f, void* b, int n, sqlite3_int64 o) {
    return LOOM_FORWARD(xRead, b, n, o);
  };
  m.xWrite = [](sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
    if (int rc = injected(SqliteFaultVfs::Call::kWrite, shim(f))) return rc;
    return LOOM_FORWARD(xWrite, b, n, o);
  };
  m.xTruncate = [](sqlite3_file* f, sqlite3_int64 s) { return LOOM_FORWARD(xTruncate, s); };
  m.xSync = [](sqlite3_file* f, int flags) {
    if (int rc = injected(SqliteFaultVfs::Call::kSync, shim(f))) return rc;
    int rc = LOOM_FORWARD(xSync, flags);
    if (rc == SQLITE_OK && gActive && gActive->onSync) {
      gActive->onSync(shim(f)->path);
    }
    return rc;
  };
  m.xFileSize = [](sqlite3_file* f, sqlite3_int64* s) { return LOOM_FORWARD(xFileSize, s); };
  m.xLock = [](sqlite3_file* f, int l) { return LOOM_FORWARD(xLock, l); };
  m.xUnlock = [](sqlite3_file* f, int l) { return LOOM_FORWARD(xUnlock, l); };
  m.xCheckReservedLock = [](sqlite3_file* f, int* r) {
    return LOOM_FORWARD(xCheckReservedLock, r);
  };
  m.xFileControl = [](sqlite3_file* f, int op, void* a) {
    return LOOM_FORWARD(xFileControl, op, a);
  };
  m.xSectorSize = [](sqlite3_file* f) {
    return shim(f)->real->pMethods->xSectorSize(shim(f)->real);
  };
  m.xDeviceCharacteristics = [](sqlite3_file* f) {
    return shim(f)->real->pMethods->xDeviceCharacteristics(shim(f)->real);
  };
  m.xShmMap = [](sqlite3_file* f, int p, int s, int e, void volatile** out) {
    return LOOM_FORWARD(xShmMap, p, s, e, out);
  };
  m.xShmLock = [](sqlite3_file* f, int o, int n, int fl) {
    return LOOM_FORWARD(xShmLock, o, n, fl);
  };
  m.xShmBarrier = [](sqlite3_file* f) { shim(f)->real->pMethods->xShmBarrier(shim(f)->real); };
  m.xShmUnmap = [](sqlite3_file* f, int d) { return LOOM_FORWARD(xShmUnmap, d); };
  m.xFetch = [](sqlite3_file* f, sqlite3_int64 o, int n, void** p) {
    return LOOM_FORWARD(xFetch, o, n, p);
  };
  m.xUnfetch = [](sqlite3_file* f, sqlite3_int64 o, void* p) {
    return LOOM_FORWARD(xUnfetch, o, p);
  };
  return m;
}

#undef LOOM_FORWARD

int shimOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* outFlags) {
  static const sqlite3_io_methods kMethods = makeMethods();
  ShimFile* f = shim(file);
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  int rc = gReal->xOpen(gReal, name, f->real, flags, outFlags);
  if (rc != SQLITE_OK) {
    f->base.pMethods = nullptr;  // SQLite does not close a file whose open failed
    return rc;
  }
  new (&f->path) std::string(name ? name : "");
  new (&f->name) std::string(std::filesystem::path(f->path).filename().string());
  f->base.pMethods = &kMethods;
  return SQLITE_OK;
}

}  // namespace

SqliteFaultVfs::SqliteFaultVfs() {
  if (gActive) throw std::logic_error("one SqliteFaultVfs at a time");
  gReal = sqlite3_vfs_find(nullptr);
  gShim = *gReal;
  gShim.zName = "loom-test-fault-vfs";
  gShim.szOsFile = static_cast<int>(sizeof(ShimFile)) + gReal->szOsFile;
  gShim.xOpen = shimOpen;
  gShim.pNext = nullptr;
  {
    std::lock_guard lock(gMu);
    gFault = {};
  }
  gActive = this;
  sqlite3_vfs_register(&gShim, 1);
}

SqliteFaultVfs::~SqliteFaultVfs() {
  sqlite3_vfs_unregister(&gShim);
  sqlite3_vfs_register(gReal, 1);
  std::lock_guard lock(gMu);
  gFault = {};
  gActive = nullptr;
}

void SqliteFaultVfs::fail(Call call, std::string fileName, int rc, int count, int skip) {
  std::lock_guard lock(gMu);
  gFault = Fault{call, std::move(fileName), rc, count, skip, 0};
}

void SqliteFaultVfs::clear() {
  std::lock_guard lock(gMu);
  gFault.fileName.clear();
}

int SqliteFaultVfs::failed() const {
  std::lock_guard lock(gMu);
  return gFault.failed;
}

}  // namespace loom::testing
